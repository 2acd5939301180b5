"""Alembic environment for Planwright's schema.

Two ways in:

* :func:`app.store.database.migrate` passes an open connection (inside its own
  transaction) as ``config.attributes["connection"]``; the migrations run on it.
* The ``alembic`` command line (``alembic.ini`` at the repository root) has no
  connection; the database comes from ``-x url=...``, else ``DATABASE_URL``, else
  ``sqlalchemy.url`` in the ini file, and an async engine is made for it.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy import Connection
from sqlalchemy.pool import NullPool

from app.store.database import WRITE_OPTIONS, create_engine, normalise_url
from app.store.models import UTCDateTime, metadata

config = context.config


def _render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Render the models' custom column types as plain SQLAlchemy ones in new revisions."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    if type_ == "type" and type(obj).__module__.startswith("sqlmodel"):  # AutoString
        length = getattr(obj, "length", None)
        return "sa.String()" if length is None else f"sa.String(length={length})"
    return False


def _configure(**kwargs: Any) -> None:
    context.configure(
        target_metadata=metadata,
        render_as_batch=True,  # SQLite can only alter tables by rebuilding them
        render_item=_render_item,
        compare_type=True,
        **kwargs,
    )


def _run_on(connection: Connection) -> None:
    # SQLAlchemy emits BEGIN on SQLite too (see database.py), so DDL is transactional.
    _configure(connection=connection, transactional_ddl=True)
    with context.begin_transaction():
        context.run_migrations()


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url") or os.environ.get("DATABASE_URL")
    url = url or config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("no database: pass -x url=..., or set DATABASE_URL")
    return url


async def _run_standalone() -> None:
    engine = create_engine(_url(), poolclass=NullPool)
    try:
        async with engine.connect() as conn:
            conn = await conn.execution_options(**WRITE_OPTIONS)
            await conn.run_sync(_run_on)
            await conn.commit()
    finally:
        await engine.dispose()


def run() -> None:
    if context.is_offline_mode():
        _configure(url=normalise_url(_url()), literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    connection = config.attributes.get("connection")
    if connection is not None:
        _run_on(connection)
    else:
        asyncio.run(_run_standalone())


run()
