"""Store.create_workflows: several workflows in one transaction, all or none."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.store import Store, migrate
from tests.app.store.helpers import Clock


async def test_creates_all_with_one_version_each(store: Store) -> None:
    records = await store.create_workflows(
        [("One", "name: One\n"), ("Two", "name: Two\n")], author="me", tool="import"
    )
    assert [r.name for r in records] == ["One", "Two"]
    listed = {w.id: w for w in await store.list_workflows()}
    assert set(listed) == {r.id for r in records}
    for record in records:
        (version,) = await store.list_versions(record.id)
        assert (version.version, version.tool, version.author) == (1, "import", "me")
        assert (await store.get_workflow(record.id)).owner == "me"  # type: ignore[union-attr]


async def test_a_failure_part_way_creates_none(engine: AsyncEngine, clock: Clock) -> None:
    await migrate(engine)
    # The second workflow gets the first one's id: its insert fails after the first ran.
    store = Store(engine, now=clock, new_id=lambda: "same-id")
    with pytest.raises(IntegrityError):
        await store.create_workflows([("One", "name: One\n"), ("Two", "name: Two\n")])
    assert await store.list_workflows() == []
