"""Fixtures running every store test against SQLite (a temporary file) and Postgres.

The ``database_url`` fixture (one empty database per backend) lives in
``tests/databases.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.store import Store, create_engine, migrate


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on an empty database (no migrations applied)."""
    engine = create_engine(database_url)
    try:
        yield engine
    finally:
        await engine.dispose()


class Clock:
    """Starts at 2026-01-01 00:00 UTC and moves one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class Ids:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"id-{self.count}"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def store(engine: AsyncEngine, clock: Clock) -> Store:
    await migrate(engine)
    return Store(engine, now=clock, new_id=Ids())
