"""Fixtures running every store test against SQLite (a temporary file) and Postgres.

The ``database_url`` fixture (one empty database per backend) lives in
``tests/databases.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.store import Store, create_engine, migrate
from tests.app.store.helpers import Clock, Ids


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on an empty database (no migrations applied)."""
    engine = create_engine(database_url)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def store(engine: AsyncEngine, clock: Clock) -> Store:
    await migrate(engine)
    return Store(engine, now=clock, new_id=Ids())
