"""Database URLs, async engines, and Alembic migrations applied on start.

SQLite (aiosqlite) by default, Postgres (asyncpg, or psycopg 3) when the URL says
so. On SQLite every connection runs in WAL mode with foreign keys on and a busy
timeout, and SQLAlchemy (not the driver) emits ``BEGIN``, so reads, writes and
DDL all run in real transactions; a connection with the ``sqlite_begin``
execution option set to ``"IMMEDIATE"`` takes the write lock up front (see
:data:`WRITE_OPTIONS`), which is what makes concurrent writers wait their turn
instead of failing.

:func:`migrate` runs ``alembic upgrade head`` on a connection of the given engine.
It is safe to call from several workers at once: Postgres serialises them with an
advisory lock, SQLite with ``BEGIN IMMEDIATE``; the latecomers find the schema
at head and do nothing.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

log = logging.getLogger(__name__)
MIGRATIONS_DIR = Path(__file__).with_name("migrations")
SQLITE_BUSY_TIMEOUT_MS = 30_000
# Execution options for transactions that write: on SQLite they begin with
# ``BEGIN IMMEDIATE``; other backends ignore them.
WRITE_OPTIONS: dict[str, Any] = {"sqlite_begin": "IMMEDIATE"}
# Any constant works; it names "Planwright schema migration" among advisory locks.
_PG_MIGRATION_LOCK = 0x706C616E

_SYNC_TO_ASYNC = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+pysqlite": "sqlite+aiosqlite",
    "postgres": "postgresql+asyncpg",
    "postgresql": "postgresql+asyncpg",
    "postgresql+psycopg2": "postgresql+asyncpg",
}


def normalise_url(url: str) -> str:
    """The async-driver form of a database URL.

    ``sqlite:///x.db`` → ``sqlite+aiosqlite:///x.db``; ``postgres://`` and
    ``postgresql://`` → ``postgresql+asyncpg://`` (a libpq ``sslmode`` query
    parameter becomes asyncpg's ``ssl``). URLs that already name an async driver
    (``sqlite+aiosqlite``, ``postgresql+asyncpg``, ``postgresql+psycopg``) are
    returned unchanged.
    """
    scheme, sep, rest = url.strip().partition("://")
    if not sep or not scheme:
        raise ValueError(f"not a database URL: {url!r}")
    target = _SYNC_TO_ASYNC.get(scheme.lower())
    if target is None:
        return url.strip()
    if target == "postgresql+asyncpg":
        rest = _sslmode_to_ssl(rest)
    return f"{target}://{rest}"


def _sslmode_to_ssl(rest: str) -> str:
    base, q, query = rest.partition("?")
    if not q:
        return rest
    params = [
        "ssl=" + p.partition("=")[2] if p.startswith("sslmode=") else p for p in query.split("&")
    ]
    return f"{base}?{'&'.join(params)}"


def is_sqlite(engine: AsyncEngine | AsyncConnection | Connection) -> bool:
    return engine.dialect.name == "sqlite"


def create_engine(
    url: str,
    *,
    timeout_s: float | None = None,
    statement_timeout_s: float | None = None,
    **kwargs: Any,
) -> AsyncEngine:
    """An :class:`AsyncEngine` for ``url`` (normalised first); ``kwargs`` go to SQLAlchemy.

    On Postgres, ``timeout_s`` bounds connecting and waiting for a pooled connection,
    ``statement_timeout_s`` every statement (the server's ``statement_timeout``;
    migrations lift it for their own transaction). A pooled connection is pinged before
    use, so connections the server dropped (a restart, ``pg_terminate_backend``) are
    replaced rather than failing the next request."""
    sa_url = make_url(normalise_url(url))
    # A failed statement's error would otherwise carry its parameters (whole documents,
    # job code, names) into logs and error messages.
    kwargs.setdefault("hide_parameters", True)
    if sa_url.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
        if timeout_s is not None:
            kwargs.setdefault("pool_timeout", timeout_s)
        if sa_url.get_driver_name() == "asyncpg":
            connect_args = dict(kwargs.pop("connect_args", {}))
            if timeout_s is not None:
                connect_args.setdefault("timeout", timeout_s)
            if statement_timeout_s is not None:
                settings = dict(connect_args.get("server_settings", {}))
                settings.setdefault("statement_timeout", str(_ms(statement_timeout_s)))
                connect_args["server_settings"] = settings
            kwargs["connect_args"] = connect_args
        return create_async_engine(sa_url, **kwargs)
    if sa_url.database in (None, "", ":memory:"):
        # One shared connection, or every checkout would see its own empty database.
        kwargs.setdefault("poolclass", StaticPool)
    elif not sa_url.query.get("uri"):
        # SQLite makes the file but not its folder (the settings' data_dir, say).
        Path(sa_url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(sa_url, **kwargs)
    _configure_sqlite(engine)
    return engine


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy emit BEGIN itself (see ``_on_begin``); the driver's own
        # implicit transactions skip SELECT and DDL.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA journal_mode")
            if cursor.fetchone()[0] not in ("wal", "memory"):
                try:
                    cursor.execute("PRAGMA journal_mode = WAL")
                except engine.dialect.loaded_dbapi.OperationalError as exc:
                    if "locked" not in str(exc):
                        raise
                    # Another connection is writing; ``migrate`` retries the switch.
                    log.debug("could not switch %s to WAL yet", engine.url.database)
        finally:
            cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "")
        if mode not in ("", "DEFERRED", "IMMEDIATE", "EXCLUSIVE"):
            raise ValueError(f"bad sqlite_begin mode {mode!r}")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic's configuration, built in code (no ``alembic.ini`` needed).

    With ``connection``, ``env.py`` migrates on that connection inside the
    caller's transaction.
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def _upgrade(connection: Connection, revision: str) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
    command.upgrade(alembic_config(connection), revision)
    if is_sqlite(connection):
        problems = connection.exec_driver_sql("PRAGMA foreign_key_check").all()
        if problems:
            raise RuntimeError(f"migration left dangling foreign keys: {problems[:5]}")


async def migrate(engine: AsyncEngine, revision: str = "head") -> None:
    """Upgrade the schema to ``revision`` in one transaction. A no-op when already there."""
    await _run_migration(engine, _upgrade, revision)


async def downgrade(engine: AsyncEngine, revision: str) -> None:
    """Downgrade the schema to ``revision`` (``"base"``: nothing) in one transaction
    (for tests and operators; the service itself only ever upgrades)."""

    def _down(connection: Connection, target: str) -> None:
        command.downgrade(alembic_config(connection), target)

    await _run_migration(engine, _down, revision)


async def _run_migration(
    engine: AsyncEngine, step: Callable[[Connection, str], None], revision: str
) -> None:
    async with engine.connect() as conn:
        sqlite = is_sqlite(conn)
        if sqlite:
            await _ensure_wal(conn)
            # Table rebuilds (Alembic batch mode) would otherwise cascade deletes;
            # the pragma only takes effect outside a transaction.
            await _driver_execute(conn, "PRAGMA foreign_keys = OFF")
        try:
            conn = await conn.execution_options(**WRITE_OPTIONS)
            async with conn.begin():
                if not sqlite:  # workers starting together wait on the advisory lock
                    await conn.execute(text("SET LOCAL statement_timeout = 0"))
                await conn.run_sync(step, revision)
        finally:
            if sqlite:
                await _driver_execute(conn, "PRAGMA foreign_keys = ON")


async def _driver_execute(conn: AsyncConnection, sql: str) -> Any:
    """Run ``sql`` on the DBAPI connection, outside any SQLAlchemy transaction;
    the first column of the first row, if any."""
    raw = await conn.get_raw_connection()
    cursor = await raw.driver_connection.execute(sql)  # type: ignore[union-attr]
    try:
        row = await cursor.fetchone()
    finally:
        await cursor.close()
    return None if row is None else row[0]


async def _ensure_wal(conn: AsyncConnection, *, attempts: int = 100) -> None:
    """Switch a SQLite file to WAL (a lasting property of the file).

    Only the first connection to a new file does the switch, and SQLite refuses
    it at once (no busy wait: it could deadlock) while another connection is
    writing, e.g. a second worker migrating the same new file. Connections
    therefore only try once (see ``create_engine``); this retries.
    """
    for _ in range(attempts):
        try:
            mode = await _driver_execute(conn, "PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
        else:
            if mode in ("wal", "memory"):
                return
        await asyncio.sleep(0.05)
    log.warning("SQLite database %s is not in WAL mode", conn.engine.url.database)


async def current_revision(engine: AsyncEngine) -> str | None:
    """The revision the database is at (``None`` before the first migration)."""
    from alembic.runtime.migration import MigrationContext

    def _current(connection: Connection) -> str | None:
        return MigrationContext.configure(connection).get_current_revision()

    async with engine.connect() as conn:
        return await conn.run_sync(_current)


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head
