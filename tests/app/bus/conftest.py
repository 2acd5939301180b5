"""Bus and lock fixtures, run against both backends.

Every test gets its own key prefix and workflow ids (uuids), so concurrent runs
never collide. The Redis backend needs a real Redis (``PLANWRIGHT_TEST_REDIS_URL``,
default ``redis://127.0.0.1:6379/0``): when it is unreachable the tests fail.
Each Redis bus or lock gets its own client, as a separate worker would.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.app.bus.helpers import Kit


def _running_tasks() -> set[asyncio.Task[Any]]:
    return {task for task in asyncio.all_tasks() if not task.done()}


@contextlib.asynccontextmanager
async def _no_leaked_tasks(kind: str) -> AsyncIterator[Kit]:
    """A :class:`Kit`, closed afterwards; fails if it left any task running."""
    baseline = _running_tasks()
    kit = Kit(kind)
    try:
        yield kit
    finally:
        await kit.aclose()
    await asyncio.sleep(0)
    leaked = _running_tasks() - baseline - {asyncio.current_task()}
    assert not leaked, f"tasks left running: {leaked}"


@pytest.fixture(params=["memory", "redis"])
async def kit(request: pytest.FixtureRequest) -> AsyncIterator[Kit]:
    async with _no_leaked_tasks(request.param) as kit:
        yield kit


@pytest.fixture
async def redis_kit() -> AsyncIterator[Kit]:
    async with _no_leaked_tasks("redis") as kit:
        yield kit
