"""The event bus and turn lock interfaces, shared by the in-process and Redis versions.

Events published per workflow are JSON-able dicts. ``workflow`` events carry
``version``; a subscriber that passes ``since_version`` first receives every
retained ``workflow`` event newer than that version, then live events.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

Event = dict[str, Any]


class EncodedEvent(dict[str, Any]):
    """A bus event that keeps the compact JSON it was decoded from (``text``), so the
    sockets relaying it send that text rather than each encoding the full YAML again."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        decoded = json.loads(text)
        if not isinstance(decoded, dict):
            raise ValueError("a bus event is a JSON object")
        super().__init__(decoded)
        self.text = text


class Subscription(Protocol):
    """Live events for one workflow. Iterate it; ``close`` (or ``async with``) ends it."""

    def __aiter__(self) -> AsyncIterator[Event]: ...

    def take_replay(self) -> list[Event]:
        """Remove and return the replayed (``since_version``) events not yet read."""
        ...

    async def close(self) -> None: ...


class EventBus(Protocol):
    async def publish(self, workflow_id: str, event: Event) -> None: ...

    async def subscribe(
        self, workflow_id: str, *, since_version: int | None = None
    ) -> Subscription:
        """Start listening now; when ``since_version`` is given, replay retained
        ``workflow`` events with a greater version first (in version order, no duplicates
        with the live ones). Returns once the subscription is live."""
        ...

    async def close(self) -> None: ...


class LockHandle(Protocol):
    token: str

    async def release(self) -> None: ...


class TurnLock(Protocol):
    """One turn at a time per workflow, across every worker, with a line of waiting
    turns (``join``/``poll``/``leave``, :mod:`app.bus.queue`)."""

    async def acquire(self, workflow_id: str, *, ttl_s: float = 30.0) -> LockHandle | None:
        """The lock, or ``None`` when another turn holds it. While held, it is renewed
        in the background until released; if the holder dies it expires after ``ttl_s``
        (sooner where the lock has a heartbeat)."""
        ...

    async def join(
        self, workflow_id: str, ticket: str, *, ttl_s: float, max_queue: int
    ) -> tuple[LockHandle | None, int]: ...

    async def poll(
        self, workflow_id: str, ticket: str, *, ttl_s: float
    ) -> tuple[LockHandle | None, int]: ...

    async def leave(self, workflow_id: str, ticket: str) -> None: ...
