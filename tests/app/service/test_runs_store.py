"""Test runs in the store, on SQLite and Postgres: stored with their version, read back
newest first and bounded, the session's last run, a gone workflow refused."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.store import NotFoundError, Store, create_engine, migrate
from tests.app.store.helpers import Clock, Ids
from tools.testrun import RunStatus, StepRun, TestRun

DOC = "name: demo\njobs: {}\n"


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    engine: AsyncEngine = create_engine(database_url)
    await migrate(engine)
    try:
        yield Store(engine, now=Clock(), new_id=Ids())
    finally:
        await engine.dispose()


def _run(
    run_id: str, workflow_id: str, version: int = 1, status: RunStatus = "succeeded"
) -> TestRun:
    return TestRun(
        run_id=run_id,
        workflow_id=workflow_id,
        version=version,
        status=status,
        steps=[
            StepRun(
                key="check",
                name="Check",
                status="failed" if status == "failed" else "succeeded",
                duration_ms=3,
                input={"data": {"text": "NUL \x00 kept", "greek": "αβγ"}},
            )
        ],
        created_by="Ana",
    )


async def test_a_run_is_stored_with_its_version_and_read_back_whole(store: Store) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC)
    session = await store.create_session(workflow_id=wf.id, read_only=False)
    saved = await store.save_test_run(_run("r1", wf.id, 1), session_id=session.id, turn_id="t1")
    assert saved.run.created_at is not None
    found = await store.get_test_run("r1")
    assert found is not None
    assert (found.workflow_id, found.version, found.status) == (wf.id, 1, "succeeded")
    assert (found.session_id, found.turn_id, found.created_by) == (session.id, "t1", "Ana")
    assert found.run == saved.run
    assert found.run.steps[0].input == {"data": {"text": "NUL \x00 kept", "greek": "αβγ"}}
    assert await store.get_test_run("nope") is None


async def test_runs_are_listed_newest_first_bounded_and_per_workflow(store: Store) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC)
    other = await store.create_workflow(name="Other", yaml=DOC)
    for n in range(5):
        await store.save_test_run(_run(f"r{n}", wf.id))
    await store.save_test_run(_run("elsewhere", other.id))
    listed = await store.list_test_runs(wf.id, limit=3)
    assert [r.id for r in listed] == ["r4", "r3", "r2"]
    assert [r.id for r in await store.list_test_runs(other.id, limit=10)] == ["elsewhere"]
    assert await store.list_test_runs("unknown", limit=10) == []


async def test_the_sessions_last_run_is_its_newest_on_that_workflow(store: Store) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC)
    session = await store.create_session(workflow_id=wf.id, read_only=False)
    assert await store.last_session_run(session.id, wf.id) is None
    await store.save_test_run(_run("a", wf.id, status="failed"), session_id=session.id)
    await store.save_test_run(_run("b", wf.id, status="succeeded"), session_id=session.id)
    await store.save_test_run(_run("rest", wf.id, status="failed"))  # no session: not its
    last = await store.last_session_run(session.id, wf.id)
    assert last is not None and last.id == "b"


async def test_a_run_of_a_workflow_that_does_not_exist_is_not_stored(store: Store) -> None:
    with pytest.raises(NotFoundError):
        await store.save_test_run(_run("r1", "missing"))
    assert await store.get_test_run("r1") is None
