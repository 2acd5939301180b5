"""The store on SQLite and Postgres: migrations, workflows and versions, the
optimistic commit under concurrency, sessions, messages, turns, error paths."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from pydantic import ValidationError
from sqlalchemy import Connection, inspect, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from agents.events import ModelCallUsage
from app.errors import ConflictError, NotFoundError, VersionConflictError
from app.store import Store, create_engine, migrate, normalise_url
from app.store.database import (
    WRITE_OPTIONS,
    alembic_config,
    current_revision,
    head_revision,
)
from app.store.models import metadata, workflows
from tests.app.store.helpers import Clock
from tools.errors import PlanwrightError

TABLES = {
    "projects",
    "workflows",
    "workflow_versions",
    "chat_sessions",
    "messages",
    "turns",
    "model_calls",
}
DOC = "name: demo\njobs: {}\n"


# -- URLs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("sqlite:///planwright.db", "sqlite+aiosqlite:///planwright.db"),
        ("sqlite:////abs/path/x.db", "sqlite+aiosqlite:////abs/path/x.db"),
        ("sqlite://", "sqlite+aiosqlite://"),
        ("sqlite+pysqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("sqlite+aiosqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("postgres://u:p%40ss@db:5432/pw", "postgresql+asyncpg://u:p%40ss@db:5432/pw"),
        ("postgresql://u@db/pw", "postgresql+asyncpg://u@db/pw"),
        ("postgresql+psycopg2://u@db/pw", "postgresql+asyncpg://u@db/pw"),
        ("postgresql+asyncpg://u@db/pw", "postgresql+asyncpg://u@db/pw"),
        ("postgresql+psycopg://u@db/pw", "postgresql+psycopg://u@db/pw"),
        (
            "postgres://u@db/pw?sslmode=require&application_name=pw",
            "postgresql+asyncpg://u@db/pw?ssl=require&application_name=pw",
        ),
        ("  sqlite:///x.db\n", "sqlite+aiosqlite:///x.db"),
    ],
)
def test_normalise_url(given: str, expected: str) -> None:
    assert normalise_url(given) == expected


@pytest.mark.parametrize("bad", ["", "planwright.db", "://x"])
def test_normalise_url_rejects_non_urls(bad: str) -> None:
    with pytest.raises(ValueError, match="not a database URL"):
        normalise_url(bad)


# -- migrations ----------------------------------------------------------------------------


def _tables(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


async def test_migrations_apply_on_an_empty_database_and_are_idempotent(
    engine: AsyncEngine,
) -> None:
    assert await current_revision(engine) is None
    await migrate(engine)
    assert await current_revision(engine) == head_revision()
    async with engine.connect() as conn:
        assert await conn.run_sync(_tables) >= TABLES | {"alembic_version"}
    await migrate(engine)  # second run: nothing to do, nothing breaks
    assert await current_revision(engine) == head_revision()


async def test_migrations_match_the_models(engine: AsyncEngine) -> None:
    await migrate(engine)

    def diff(connection: Connection) -> list[object]:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, metadata))

    async with engine.connect() as conn:
        assert await conn.run_sync(diff) == []


async def test_migrations_downgrade_to_nothing_and_back(engine: AsyncEngine) -> None:
    await migrate(engine)

    def downgrade(connection: Connection) -> None:
        command.downgrade(alembic_config(connection), "base")

    async with engine.begin() as conn:
        await conn.run_sync(downgrade)
    async with engine.connect() as conn:
        assert await conn.run_sync(_tables) & TABLES == set()
    await migrate(engine)
    assert await current_revision(engine) == head_revision()


async def test_workers_migrating_at_the_same_time_all_succeed(database_url: str) -> None:
    engines = [create_engine(database_url) for _ in range(3)]
    try:
        await asyncio.gather(*(migrate(e) for e in engines))
        assert await current_revision(engines[0]) == head_revision()
    finally:
        await asyncio.gather(*(e.dispose() for e in engines))


async def test_sqlite_connections_use_wal_foreign_keys_and_a_busy_timeout(
    tmp_path: Path,
) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        async with engine.connect() as conn:
            assert (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar() == "wal"
            assert (await conn.exec_driver_sql("PRAGMA foreign_keys")).scalar() == 1
            timeout = (await conn.exec_driver_sql("PRAGMA busy_timeout")).scalar()
            assert isinstance(timeout, int) and timeout >= 5000
    finally:
        await engine.dispose()


async def test_in_memory_sqlite_keeps_one_database() -> None:
    engine = create_engine("sqlite://")
    try:
        await migrate(engine)
        store = Store(engine)
        created = await store.create_workflow(name="mem", yaml=DOC, author=None)
        assert await store.get_workflow(created.id) == created
    finally:
        await engine.dispose()


# -- workflows and versions ----------------------------------------------------------------


async def test_create_and_get_workflow(store: Store) -> None:
    created = await store.create_workflow(name="Demo", yaml=DOC, author="alice")
    assert (created.name, created.version, created.yaml, created.owner) == (
        "Demo",
        1,
        DOC,
        "alice",
    )
    assert created.created_at == created.updated_at
    assert created.created_at.tzinfo is not None
    assert await store.get_workflow(created.id) == created
    (version,) = await store.list_versions(created.id)
    assert (version.version, version.tool, version.author, version.yaml) == (
        1,
        "create",
        "alice",
        None,
    )
    full = await store.get_version(created.id, 1)
    assert full is not None and full.yaml == DOC


async def test_import_records_its_tool_and_owner(store: Store) -> None:
    created = await store.create_workflow(
        name="Imported", yaml=DOC, author="alice", owner="team", tool="import", summary="Imported"
    )
    assert created.owner == "team"
    (version,) = await store.list_versions(created.id)
    assert (version.tool, version.summary) == ("import", "Imported")


async def test_list_workflows_newest_first(store: Store) -> None:
    names = ["first", "second", "third"]
    for name in names:
        await store.create_workflow(name=name, yaml=DOC, author=None)
    assert [w.name for w in await store.list_workflows()] == names[::-1]
    assert [w.name for w in await store.list_workflows(limit=2)] == ["third", "second"]


async def test_missing_things_are_none_or_empty(store: Store) -> None:
    assert await store.get_workflow("nope") is None
    assert await store.get_version("nope", 1) is None
    assert await store.list_versions("nope") == []
    assert await store.get_session("nope") is None
    assert await store.list_messages("nope") == []
    assert await store.get_turn("nope") is None
    assert await store.paused_turn("nope") is None
    with pytest.raises(NotFoundError) as caught:
        await store.require_workflow("nope")
    assert caught.value.code == "not_found"
    assert isinstance(caught.value, PlanwrightError)


async def test_commit_version_increments_and_writes_version_rows(
    store: Store, clock: Clock
) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC, author="alice")
    v2 = await store.commit_version(
        wf.id,
        yaml="name: two\n",
        name="Two",
        expected_version=1,
        author="bob",
        session_id="s-1",
        turn_id="t-1",
        tool="add_jobs",
        summary="Added a job",
    )
    v3 = await store.commit_version(
        wf.id, yaml="name: three\n", name=None, expected_version=2, tool="put"
    )
    assert (v2, v3) == (2, 3)
    current = await store.get_workflow(wf.id)
    assert current is not None
    assert (current.version, current.yaml, current.name) == (3, "name: three\n", "Two")
    assert current.created_at == wf.created_at
    assert current.updated_at > wf.updated_at

    versions = await store.list_versions(wf.id)
    assert [v.version for v in versions] == [3, 2, 1]
    assert all(v.yaml is None for v in versions)
    two = await store.get_version(wf.id, 2)
    assert two is not None
    assert (two.yaml, two.author, two.session_id, two.turn_id, two.tool, two.summary) == (
        "name: two\n",
        "bob",
        "s-1",
        "t-1",
        "add_jobs",
        "Added a job",
    )
    assert two.workflow_id == wf.id
    assert two.created_at.tzinfo is not None


async def test_stale_commit_raises_and_changes_nothing(store: Store) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    await store.commit_version(wf.id, yaml="name: two\n", expected_version=1, tool="put")
    before = await store.get_workflow(wf.id)
    with pytest.raises(VersionConflictError) as caught:
        await store.commit_version(
            wf.id, yaml="name: stale\n", name="Stale", expected_version=1, tool="put"
        )
    error = caught.value
    assert isinstance(error, ConflictError)
    assert error.code == "version_conflict"
    assert error.details["current_version"] == 2
    assert error.details["expected_version"] == 1
    assert error.as_dict()["current_version"] == 2
    assert await store.get_workflow(wf.id) == before
    assert [v.version for v in await store.list_versions(wf.id)] == [2, 1]


async def test_commit_to_a_missing_workflow_is_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError):
        await store.commit_version("nope", yaml=DOC, expected_version=1, tool="put")


async def test_concurrent_commits_on_the_same_version_exactly_one_wins(
    store: Store, database_url: str
) -> None:
    # Separate engines, as separate worker processes would have.
    others = [create_engine(database_url) for _ in range(3)]
    stores = [store, *(Store(e) for e in others)]
    try:
        wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
        for base in (1, 2, 3):
            results = await asyncio.gather(
                *(
                    s.commit_version(
                        wf.id, yaml=f"by: {i}\n", expected_version=base, tool="put", author=str(i)
                    )
                    for i, s in enumerate(stores)
                ),
                return_exceptions=True,
            )
            wins = [r for r in results if r == base + 1]
            conflicts = [r for r in results if isinstance(r, VersionConflictError)]
            assert (len(wins), len(conflicts)) == (1, len(stores) - 1), results
            winner = next(i for i, r in enumerate(results) if r == base + 1)
            current = await store.get_workflow(wf.id)
            assert current is not None
            assert (current.version, current.yaml) == (base + 1, f"by: {winner}\n")
            row = await store.get_version(wf.id, base + 1)
            assert row is not None and row.author == str(winner)
        assert [v.version for v in await store.list_versions(wf.id)] == [4, 3, 2, 1]
    finally:
        await asyncio.gather(*(e.dispose() for e in others))


async def test_commit_waiting_behind_another_writer_sees_its_version(
    store: Store, database_url: str
) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    other = create_engine(database_url)
    try:
        async with other.connect() as conn:
            conn = await conn.execution_options(**WRITE_OPTIONS)
            async with conn.begin():
                # Another worker is mid-commit of version 2 and holds the row (or, on
                # SQLite, the write lock).
                await conn.execute(
                    workflows.update().where(workflows.c.id == wf.id).values(version=2)
                )
                pending = asyncio.create_task(
                    store.commit_version(wf.id, yaml="late\n", expected_version=1, tool="put")
                )
                await asyncio.sleep(0.3)
                assert not pending.done()
            with pytest.raises(VersionConflictError) as caught:
                await pending
        assert caught.value.details["current_version"] == 2
    finally:
        await other.dispose()


# -- sessions and messages -----------------------------------------------------------------


async def test_sessions(store: Store) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    session = await store.create_session(workflow_id=wf.id, read_only=True, owner="rev")
    assert (session.workflow_id, session.read_only, session.owner) == (wf.id, True, "rev")
    assert await store.get_session(session.id) == session
    editable = await store.create_session(workflow_id=wf.id, read_only=False, owner=None)
    assert editable.id != session.id and not editable.read_only


async def test_session_for_a_missing_workflow_is_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError):
        await store.create_session(workflow_id="nope", read_only=False, owner=None)


async def test_messages_come_back_oldest_first(store: Store) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    session = await store.create_session(workflow_id=wf.id, read_only=False, owner=None)
    other = await store.create_session(workflow_id=wf.id, read_only=False, owner=None)
    said = [("user", "add a job"), ("assistant", "done"), ("user", "thanks")]
    added = [await store.add_message(session.id, r, c, "t-1") for r, c in said]  # type: ignore[arg-type]
    await store.add_message(other.id, "user", "elsewhere")
    listed = await store.list_messages(session.id)
    assert listed == added
    assert [(m.role, m.content, m.turn_id) for m in listed] == [(r, c, "t-1") for r, c in said]
    assert [m.id for m in listed] == sorted(m.id for m in listed)
    assert [m.content for m in await store.list_messages(other.id)] == ["elsewhere"]


async def test_message_errors(store: Store) -> None:
    with pytest.raises(NotFoundError):
        await store.add_message("nope", "user", "hello")
    with pytest.raises(ValueError, match="role"):
        await store.add_message("nope", "system", "hello")  # type: ignore[arg-type]


# -- turns ---------------------------------------------------------------------------------


async def test_turn_lifecycle(store: Store) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    session = await store.create_session(workflow_id=wf.id, read_only=False, owner=None)
    prompts = {"planner": "v2", "router": "v1"}
    started = await store.start_turn(
        "turn-1", session_id=session.id, workflow_id=wf.id, prompt_versions=prompts
    )
    assert (started.status, started.tool_rounds, started.route) == ("running", 0, None)
    assert await store.get_turn("turn-1") == started

    paused = await store.update_turn_status("turn-1", "paused")
    assert paused.status == "paused" and paused.updated_at > started.updated_at
    assert await store.paused_turn(session.id) == paused
    await store.update_turn_status("turn-1", "running")
    assert await store.paused_turn(session.id) is None

    call = ModelCallUsage(
        role="planner", model="scripted", input_tokens=1200, output_tokens=340, cost_usd=0.0
    )
    finished = await store.finish_turn(
        "turn-1",
        status="completed",
        route="planner",
        tool_rounds=3,
        duration_ms=2500,
        calls=[call],
    )
    assert await store.get_turn("turn-1") == finished
    assert finished.model_dump(exclude={"created_at", "updated_at"}) == {
        "id": "turn-1",
        "session_id": session.id,
        "workflow_id": wf.id,
        "route": "planner",
        "status": "completed",
        "tool_rounds": 3,
        "input_tokens": 1200,
        "output_tokens": 340,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cost_usd": 0.0,
        "duration_ms": 2500,
        "prompt_versions": prompts,
        "prompts": {},
        "error_code": None,
    }
    assert finished.created_at == started.created_at

    failed = await store.finish_turn("turn-1", status="failed", error_code="cancelled")
    assert (failed.route, failed.error_code, failed.status) == ("planner", "cancelled", "failed")


async def test_abandoning_running_turns_touches_only_that_workflow(store: Store) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    other = await store.create_workflow(name="Other", yaml=DOC, author=None)
    session = await store.create_session(workflow_id=wf.id, read_only=False, owner=None)
    elsewhere = await store.create_session(workflow_id=other.id, read_only=False, owner=None)
    for turn_id, sess, workflow in [
        ("dead", session, wf),
        ("waiting", session, wf),
        ("other", elsewhere, other),
    ]:
        await store.start_turn(
            turn_id, session_id=sess.id, workflow_id=workflow.id, prompt_versions={}
        )
    await store.update_turn_status("waiting", "paused")
    assert await store.abandon_running_turns(wf.id) == ["dead"]
    dead = await store.get_turn("dead")
    assert dead is not None and (dead.status, dead.error_code) == ("failed", "abandoned")
    waiting, untouched = await store.get_turn("waiting"), await store.get_turn("other")
    assert waiting is not None and waiting.status == "paused"
    assert untouched is not None and untouched.status == "running"


async def test_turn_errors(store: Store) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    session = await store.create_session(workflow_id=wf.id, read_only=False, owner=None)
    await store.start_turn("t", session_id=session.id, workflow_id=wf.id)
    with pytest.raises(ConflictError):
        await store.start_turn("t", session_id=session.id, workflow_id=wf.id)
    with pytest.raises(NotFoundError):
        await store.start_turn("t2", session_id="nope", workflow_id=wf.id)
    with pytest.raises(NotFoundError):
        await store.start_turn("t3", session_id=session.id, workflow_id="nope")
    with pytest.raises(NotFoundError):
        await store.finish_turn("nope", status="completed")
    with pytest.raises(NotFoundError):
        await store.update_turn_status("nope", "paused")
    with pytest.raises(ValueError, match="status"):
        await store.finish_turn("t", status="done")  # type: ignore[arg-type]
    turn = await store.get_turn("t")
    assert turn is not None and turn.status == "running"


# -- records, clock, ids -------------------------------------------------------------------


async def test_records_are_frozen(store: Store) -> None:
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    with pytest.raises(ValidationError):
        wf.version = 7  # type: ignore[misc]


async def test_timestamps_are_utc_whatever_the_clock_zone(engine: AsyncEngine) -> None:
    from datetime import timedelta, timezone

    await migrate(engine)
    local = datetime(2026, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    store = Store(engine, now=lambda: local)
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    fetched = await store.get_workflow(wf.id)
    assert fetched is not None
    assert fetched.created_at == datetime(2026, 6, 1, 10, 0, tzinfo=UTC)
    assert fetched.created_at.utcoffset() == timedelta(0)
    assert fetched == wf

    naive = Store(engine, now=lambda: datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="timezone-aware"):
        await naive.create_workflow(name="Demo", yaml=DOC, author=None)


async def test_default_ids_are_uuids(engine: AsyncEngine) -> None:
    await migrate(engine)
    store = Store(engine)
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    session = await store.create_session(workflow_id=wf.id, read_only=False)
    assert uuid.UUID(wf.id) and uuid.UUID(session.id)
    assert abs(wf.created_at - datetime.now(UTC)).total_seconds() < 60


async def test_foreign_keys_are_enforced(store: Store) -> None:
    async with store.engine.connect() as conn:
        with pytest.raises(IntegrityError, match=r"(?i)foreign key"):
            await conn.execute(
                text(
                    "INSERT INTO chat_sessions (id, workflow_id, read_only, created_at) "
                    "VALUES ('s', 'missing', false, CURRENT_TIMESTAMP)"
                )
            )
