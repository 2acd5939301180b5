"""StoreWorkspace.hold: a build's workflow lock, with the bus's failures as a
failed build (data to the plan turn), never as the whole turn's crash."""

from __future__ import annotations

from typing import Any, cast

import pytest

from app.bus.base import TurnLock
from app.bus.memory import BusUnavailableError
from app.errors import ConflictError
from app.plan_turns import StoreWorkspace
from app.publishing import Publisher
from app.store import Store


class _Handle:
    def __init__(self, release_fails: bool) -> None:
        self.release_fails = release_fails
        self.released = False

    async def release(self) -> None:
        self.released = True
        if self.release_fails:
            raise ConnectionError("Redis went away")


class _Lock:
    def __init__(self, outcome: str) -> None:
        self.outcome = outcome
        self.handle = _Handle(release_fails=outcome == "release_fails")

    async def acquire(self, key: str, *, ttl_s: float) -> Any:
        if self.outcome == "down":
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379")
        return None if self.outcome == "busy" else self.handle


def _workspace(lock: _Lock) -> StoreWorkspace:
    return StoreWorkspace(
        store=cast(Store, None),
        publisher=cast(Publisher, None),
        lock=cast(TurnLock, lock),
        project_id="p",
        session_id="s",
        author="a",
        lock_ttl_s=5,
    )


async def test_the_bus_down_is_a_failed_build_that_says_try_again() -> None:
    with pytest.raises(BusUnavailableError) as failed:
        async with _workspace(_Lock("down")).hold("w1"):
            pytest.fail("built without the lock")
    assert "try the plan again" in failed.value.message
    assert "6379" not in failed.value.message


async def test_a_busy_workflow_is_a_conflict() -> None:
    with pytest.raises(ConflictError) as busy:
        async with _workspace(_Lock("busy")).hold("w1"):
            pytest.fail("built under another turn's lock")
    assert busy.value.code == "busy"


async def test_a_lock_that_cannot_be_released_expires_and_the_build_stands() -> None:
    lock = _Lock("release_fails")
    built = False
    async with _workspace(lock).hold("w1"):
        built = True
    assert built and lock.handle.released
