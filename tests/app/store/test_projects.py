"""Projects in the store, on SQLite and Postgres: the migration that gives every existing
workflow a project of its own, creating projects and adding workflows to them, their
order, sessions on a project."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from app.errors import ConflictError, NotFoundError
from app.store import Store, create_engine, migrate
from app.store.database import current_revision, downgrade, head_revision
from app.store.models import UTCDateTime
from tests.app.store.helpers import Clock, Ids

DOC = "name: demo\njobs: {}\n"
BEFORE_PROJECTS = "0002"
T0 = datetime(2025, 6, 1, 9, 30, tzinfo=UTC)
T1 = datetime(2025, 6, 2, 10, 0, tzinfo=UTC)

# The workflows and chat_sessions tables as they were at revision 0002.
_old_workflows = sa.table(
    "workflows",
    sa.column("id", sa.String()),
    sa.column("name", sa.String()),
    sa.column("yaml", sa.Text()),
    sa.column("version", sa.Integer()),
    sa.column("created_at", UTCDateTime()),
    sa.column("updated_at", UTCDateTime()),
    sa.column("owner", sa.String()),
)
_old_sessions = sa.table(
    "chat_sessions",
    sa.column("id", sa.String()),
    sa.column("workflow_id", sa.String()),
    sa.column("read_only", sa.Boolean()),
    sa.column("owner", sa.String()),
    sa.column("created_at", UTCDateTime()),
)


async def _seed_before_projects(engine: AsyncEngine) -> None:
    await migrate(engine, BEFORE_PROJECTS)
    async with engine.begin() as conn:
        for wid, name, owner in (("wf-a", "Intake", "ana"), ("wf-b", "Billing", None)):
            await conn.execute(
                _old_workflows.insert().values(
                    id=wid,
                    name=name,
                    yaml=f"name: {name}\njobs: {{}}\n",
                    version=3,
                    created_at=T0,
                    updated_at=T1,
                    owner=owner,
                )
            )
        await conn.execute(
            _old_sessions.insert().values(
                id="s-1", workflow_id="wf-a", read_only=False, owner="ana", created_at=T1
            )
        )


async def test_migration_gives_each_existing_workflow_its_own_project(
    engine: AsyncEngine,
) -> None:
    await _seed_before_projects(engine)
    await migrate(engine)
    assert await current_revision(engine) == head_revision()
    store = Store(engine)

    projects = {p.name: p for p in await store.list_projects()}
    assert set(projects) == {"Intake", "Billing"}
    assert len({p.id for p in projects.values()}) == 2
    intake = projects["Intake"]
    assert (intake.owner, intake.created_at, intake.updated_at) == ("ana", T0, T1)
    assert intake.workflow_count == 1 and projects["Billing"].owner is None

    for wid, name in (("wf-a", "Intake"), ("wf-b", "Billing")):
        workflow = await store.require_workflow(wid)
        assert (workflow.project_id, workflow.position) == (projects[name].id, 0)
        assert workflow.version == 3  # the document and its history are untouched
        assert [w.id for w in await store.list_project_workflows(projects[name].id)] == [wid]
    session = await store.get_session("s-1")
    assert session is not None and session.project_id is None

    # A workflow added to a migrated project comes after the one it had.
    added = await store.create_workflow(name="More", yaml=DOC, project_id=intake.id)
    assert added.position == 1


async def test_migration_down_and_up_again_keeps_the_workflows(engine: AsyncEngine) -> None:
    await _seed_before_projects(engine)
    await migrate(engine)

    await downgrade(engine, BEFORE_PROJECTS)
    assert await current_revision(engine) == BEFORE_PROJECTS
    async with engine.connect() as conn:
        names = (await conn.execute(sa.select(_old_workflows.c.id))).scalars().all()
        sessions = (await conn.execute(sa.select(_old_sessions.c.id))).scalars().all()
        tables = await conn.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
    assert sorted(names) == ["wf-a", "wf-b"] and sessions == ["s-1"]
    assert "projects" not in tables
    await migrate(engine)
    assert len(await Store(engine).list_projects()) == 2


async def test_a_new_workflow_gets_a_project_of_its_own(store: Store) -> None:
    first = await store.create_workflow(name="Intake", yaml=DOC, author="ana")
    second = await store.create_workflow(name="Intake", yaml=DOC, author="ana")
    assert first.project_id != second.project_id
    project = await store.require_project(first.project_id)
    assert (project.name, project.owner, project.workflow_count) == ("Intake", "ana", 1)
    assert first.position == 0


async def test_workflows_join_a_project_in_order(store: Store, clock: Clock) -> None:
    project, none = await store.create_project(name="Referrals", author="ana")
    assert none == [] and project.workflow_count == 0
    created_at = project.updated_at
    first = await store.create_workflows(
        [("Coverage", DOC), ("Documents", DOC)], project_id=project.id, author="bo"
    )
    third = await store.create_workflow(name="Status", yaml=DOC, project_id=project.id)
    assert [w.position for w in [*first, third]] == [0, 1, 2]
    listed = await store.list_project_workflows(project.id)
    assert [w.name for w in listed] == ["Coverage", "Documents", "Status"]
    assert {w.project_id for w in listed} == {project.id}
    again = await store.require_project(project.id)
    assert again.workflow_count == 3 and again.updated_at > created_at
    assert again.owner == "ana"  # adding workflows does not change who owns the project


async def test_create_project_with_workflows_is_one_transaction(store: Store) -> None:
    project, records = await store.create_project(
        name="Imported",
        documents=[("One", "name: One\n"), ("Two", "name: Two\n")],
        author="ana",
        summary="Imported (lightning)",
    )
    assert project.workflow_count == 2
    assert [(r.name, r.position, r.project_id) for r in records] == [
        ("One", 0, project.id),
        ("Two", 1, project.id),
    ]
    (version,) = await store.list_versions(records[1].id)
    assert (version.tool, version.summary, version.author) == (
        "import",
        "Imported (lightning)",
        "ana",
    )


async def test_a_failed_project_import_leaves_nothing(engine: AsyncEngine, clock: Clock) -> None:
    await migrate(engine)
    ids = iter(["p-1", "w-1", "w-1"])  # the second workflow reuses the first one's id
    store = Store(engine, now=clock, new_id=lambda: next(ids))
    with pytest.raises(sa.exc.IntegrityError):
        await store.create_project(name="P", documents=[("One", DOC), ("Two", DOC)])
    assert await store.list_projects() == [] and await store.list_workflows() == []


async def test_adding_to_an_unknown_project_writes_nothing(store: Store) -> None:
    with pytest.raises(NotFoundError) as caught:
        await store.create_workflows([("One", DOC)], project_id="nope")
    assert caught.value.details["project_id"] == "nope"
    assert await store.list_workflows() == [] and await store.get_project("nope") is None
    with pytest.raises(NotFoundError):
        await store.require_project("nope")
    assert await store.list_project_workflows("nope") == []


async def test_several_workflows_without_a_project_share_a_new_one(store: Store) -> None:
    records = await store.create_workflows(
        [("One", DOC), ("Two", DOC)], project_name="From a file", tool="import"
    )
    assert records[0].project_id == records[1].project_id
    project = await store.require_project(records[0].project_id)
    assert (project.name, project.workflow_count) == ("From a file", 2)


async def test_projects_are_listed_newest_first(store: Store) -> None:
    older, _ = await store.create_project(name="Older")
    newer = await store.create_workflow(name="Newer", yaml=DOC)
    assert [p.name for p in await store.list_projects()] == ["Newer", "Older"]
    assert [p.workflow_count for p in await store.list_projects()] == [1, 0]
    assert [p.id for p in await store.list_projects(limit=1)] == [newer.project_id]
    assert older.id != newer.project_id


async def test_sessions_on_a_project(store: Store) -> None:
    project, (inside,) = await store.create_project(name="P", documents=[("In", DOC)])
    outside = await store.create_workflow(name="Out", yaml=DOC)
    session = await store.create_session(
        workflow_id=inside.id, project_id=project.id, read_only=True, owner="rev"
    )
    assert (session.project_id, session.workflow_id) == (project.id, inside.id)
    assert await store.get_session(session.id) == session
    plain = await store.create_session(workflow_id=outside.id, read_only=False)
    assert plain.project_id is None
    with pytest.raises(ConflictError) as caught:
        await store.create_session(workflow_id=outside.id, project_id=project.id, read_only=False)
    assert caught.value.code == "workflow_not_in_project"
    with pytest.raises(NotFoundError):
        await store.create_session(workflow_id="nope", project_id=project.id, read_only=False)


async def test_concurrent_additions_to_one_project_take_distinct_positions(
    database_url: str,
) -> None:
    setup = create_engine(database_url)
    await migrate(setup)
    project, _ = await Store(setup, new_id=Ids()).create_project(name="P")
    await setup.dispose()
    engines = [create_engine(database_url) for _ in range(4)]
    try:
        stores = [Store(e) for e in engines]
        await asyncio.gather(
            *(
                s.create_workflows([(f"W{i}a", DOC), (f"W{i}b", DOC)], project_id=project.id)
                for i, s in enumerate(stores)
            )
        )
        listed = await stores[0].list_project_workflows(project.id)
        assert [w.position for w in listed] == list(range(8))
        # Each call's two workflows sit next to each other.
        for first, second in zip(listed[::2], listed[1::2], strict=True):
            assert first.name[:-1] == second.name[:-1]
    finally:
        await asyncio.gather(*(e.dispose() for e in engines))
