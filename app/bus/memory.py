"""The in-process event bus, plus the pieces the Redis bus reuses.

``QueueSubscription`` is the one subscription type: a bounded, never-blocking
buffer fed by whichever bus owns it. The turn lock's handle and the in-process
lock are in :mod:`app.bus.lock`. Everything here runs on one event loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from types import TracebackType

from app.bus.base import EncodedEvent, Event

# The lock pieces live in app.bus.lock; importable from here too, as before.
from app.bus.lock import InProcessLock, InProcessLockHandle, RenewingHandle
from tools.errors import PlanwrightError

log = logging.getLogger(__name__)

DEFAULT_RETENTION = 500
DEFAULT_QUEUE_SIZE = 256


class SubscriberOverflowError(PlanwrightError):
    """A subscriber fell too far behind; its subscription is over (close its client)."""

    code = "slow_consumer"


class BusUnavailableError(PlanwrightError):
    """The bus lost its connection; events may have been missed, so resubscribe
    (with ``since_version``) to catch up."""

    code = "bus_unavailable"


class BusClosedError(PlanwrightError):
    code = "bus_closed"


def encode_event(event: Event) -> str:
    """The event as compact JSON; rejects non-JSON values and versionless ``workflow`` events."""
    if event.get("type") == "workflow" and not _is_version(event.get("version")):
        raise ValueError("a workflow event needs an integer 'version'")
    return json.dumps(event, separators=(",", ":"), allow_nan=False)


def _is_version(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def workflow_version(event: Event) -> int | None:
    """The version of a ``workflow`` event, ``None`` for any other event."""
    version = event.get("version")
    if event.get("type") == "workflow" and _is_version(version):
        assert isinstance(version, int)
        return version
    return None


def events_after(retained: Iterable[Event], since_version: int) -> list[Event]:
    """Retained ``workflow`` events newer than ``since_version``, oldest first, each
    version at most once (a version not above the last one kept is skipped)."""
    kept: list[Event] = []
    last = since_version
    for event in retained:
        version = workflow_version(event)
        if version is not None and version > last:
            kept.append(event)
            last = version
    return kept


class QueueSubscription:
    """Events for one workflow, buffered up to ``maxsize`` live events.

    ``deliver`` never blocks: when the buffer is full the subscription is marked
    overflowed, its buffer dropped, and the next read raises
    ``SubscriberOverflowError``. Events are shared between local subscribers:
    treat them as read-only.
    """

    def __init__(
        self,
        workflow_id: str,
        *,
        maxsize: int,
        on_close: Callable[[QueueSubscription], Awaitable[None]] | None = None,
    ) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.workflow_id = workflow_id
        self.maxsize = maxsize
        self._replay: deque[Event] = deque()
        self._live: deque[Event] = deque()
        self._wakeup = asyncio.Event()
        self._skip_upto: int | None = None
        self._error: PlanwrightError | None = None
        self._closed = False
        self._on_close = on_close

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def overflowed(self) -> bool:
        return isinstance(self._error, SubscriberOverflowError)

    def deliver(self, event: Event) -> None:
        if self._closed or self._error is not None or self._is_duplicate(event):
            return
        if len(self._live) >= self.maxsize:
            self._live.clear()
            self._error = SubscriberOverflowError(
                f"subscriber fell more than {self.maxsize} events behind",
                workflow_id=self.workflow_id,
                limit=self.maxsize,
            )
        else:
            self._live.append(event)
        self._wakeup.set()

    def start_after(self, since_version: int, replay: list[Event]) -> None:
        """Queue ``replay`` (already filtered to versions > ``since_version``) ahead of
        the live events, and from now on drop ``workflow`` events it already covers."""
        last = workflow_version(replay[-1]) if replay else None
        self._skip_upto = max(since_version, last if last is not None else since_version)
        self._replay.extend(replay)
        self._live = deque(e for e in self._live if not self._is_duplicate(e))
        self._wakeup.set()

    def take_replay(self) -> list[Event]:
        """Remove and return the replayed events not yet read (those queued by
        ``since_version``), so a caller can check them against another source
        before sending; iteration then goes on with the live events."""
        replay = list(self._replay)
        self._replay.clear()
        return replay

    def fail(self, error: PlanwrightError) -> None:
        if not self._closed and self._error is None:
            self._error = error
            self._live.clear()
            self._wakeup.set()

    def end(self) -> None:
        """End iteration without calling back into the bus (the bus is closing)."""
        self._closed = True
        self._live.clear()
        self._replay.clear()
        self._wakeup.set()

    def _is_duplicate(self, event: Event) -> bool:
        if self._skip_upto is None:
            return False
        version = workflow_version(event)
        return version is not None and version <= self._skip_upto

    def __aiter__(self) -> QueueSubscription:
        return self

    async def __anext__(self) -> Event:
        while True:
            if self._error is not None:
                await self.close()
                raise self._error
            if self._closed:
                raise StopAsyncIteration
            if self._replay:
                return self._replay.popleft()
            if self._live:
                return self._live.popleft()
            self._wakeup.clear()
            await self._wakeup.wait()

    async def close(self) -> None:
        if self._closed:
            return
        self.end()
        if self._on_close is not None:
            await self._on_close(self)

    async def __aenter__(self) -> QueueSubscription:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


class InProcessBus:
    """Per-workflow fan-out to local subscribers, with the last ``retention``
    ``workflow`` events of each workflow kept for catch-up."""

    def __init__(
        self, *, retention: int = DEFAULT_RETENTION, queue_size: int = DEFAULT_QUEUE_SIZE
    ) -> None:
        if retention < 1 or queue_size < 1:
            raise ValueError("retention and queue_size must be at least 1")
        self.retention = retention
        self.queue_size = queue_size
        self._retained: dict[str, deque[Event]] = {}
        self._subscribers: dict[str, set[QueueSubscription]] = {}
        self._closed = False

    async def publish(self, workflow_id: str, event: Event) -> None:
        self._check_open()
        shared: Event = EncodedEvent(encode_event(event))  # a private, JSON-clean copy
        if workflow_version(shared) is not None:
            retained = self._retained.setdefault(workflow_id, deque(maxlen=self.retention))
            retained.append(shared)
        for sub in list(self._subscribers.get(workflow_id, ())):
            sub.deliver(shared)

    async def subscribe(
        self, workflow_id: str, *, since_version: int | None = None
    ) -> QueueSubscription:
        self._check_open()
        sub = QueueSubscription(workflow_id, maxsize=self.queue_size, on_close=self._remove)
        self._subscribers.setdefault(workflow_id, set()).add(sub)
        if since_version is not None:
            retained = self._retained.get(workflow_id, ())
            sub.start_after(since_version, events_after(retained, since_version))
        return sub

    def local_subscribers(self, workflow_id: str) -> int:
        return len(self._subscribers.get(workflow_id, ()))

    async def _remove(self, sub: QueueSubscription) -> None:
        subs = self._subscribers.get(sub.workflow_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subscribers[sub.workflow_id]

    def _check_open(self) -> None:
        if self._closed:
            raise BusClosedError("the event bus is closed")

    async def close(self) -> None:
        self._closed = True
        for subs in self._subscribers.values():
            for sub in subs:
                sub.end()
        self._subscribers.clear()
        self._retained.clear()


__all__ = [
    "DEFAULT_QUEUE_SIZE",
    "DEFAULT_RETENTION",
    "BusClosedError",
    "BusUnavailableError",
    "InProcessBus",
    "InProcessLock",
    "InProcessLockHandle",
    "QueueSubscription",
    "RenewingHandle",
    "SubscriberOverflowError",
    "encode_event",
    "events_after",
    "workflow_version",
]
