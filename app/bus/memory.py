"""The in-process event bus and turn lock, plus the pieces the Redis versions reuse.

``QueueSubscription`` is the one subscription type: a bounded, never-blocking
buffer fed by whichever bus owns it. ``RenewingHandle`` is the one lock handle
shape: a background task renews the lock every ``ttl/3`` and flags ``lost`` when
the lock turns out to be gone. Everything here runs on one event loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from types import TracebackType

from app.bus.base import EncodedEvent, Event
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


class RenewingHandle(ABC):
    """A held lock. Renewed every ``every_s`` (default ``ttl_s / 3``) until released;
    ``lost`` turns true when a renewal finds the lock gone (expired, or taken over by
    someone else)."""

    def __init__(
        self,
        workflow_id: str,
        token: str,
        ttl_s: float,
        *,
        renew: bool,
        on_done: Callable[[RenewingHandle], None],
        every_s: float | None = None,
    ) -> None:
        self.workflow_id = workflow_id
        self.token = token
        self.ttl_s = ttl_s
        self.every_s = every_s if every_s is not None else ttl_s / 3
        self.lost = False
        self.released = False
        self._on_done = on_done
        self._renewal: asyncio.Task[None] | None = None
        if renew:
            self._renewal = asyncio.create_task(
                self._renew_forever(), name=f"planwright-lock-renew:{workflow_id}"
            )

    @abstractmethod
    async def _extend(self) -> bool:
        """Push the expiry out by ``ttl_s`` if ``token`` still holds the lock."""

    @abstractmethod
    async def _delete(self) -> None:
        """Remove the lock if ``token`` still holds it."""

    async def _renew_forever(self) -> None:
        loop = asyncio.get_running_loop()
        last_ok = loop.time()
        while True:
            await asyncio.sleep(self.every_s)
            try:
                held = await self._extend()
            except Exception:  # a transient failure: keep trying while the lock may live
                log.warning("renewing the turn lock of %s failed", self.workflow_id, exc_info=True)
                if loop.time() - last_ok < self.ttl_s:
                    continue
                held = False
            if not held:
                log.warning("lost the turn lock of %s", self.workflow_id)
                self.lost = True
                return
            last_ok = loop.time()

    async def stop_renewal(self) -> None:
        """Stop renewing without releasing (the lock then expires after ``ttl_s``)."""
        task, self._renewal = self._renewal, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task])

    async def release(self) -> None:
        """Stop renewing and delete the lock if this handle still holds it. Never raises
        for a failed delete (safe in ``finally``): the lock then expires after ``ttl_s``."""
        if self.released:
            return
        self.released = True
        try:
            await self.stop_renewal()
            await self._delete()
        except Exception:
            log.warning("releasing the turn lock of %s failed", self.workflow_id, exc_info=True)
        finally:
            self._on_done(self)


class InProcessLockHandle(RenewingHandle):
    def __init__(
        self, lock: InProcessLock, workflow_id: str, token: str, ttl_s: float, *, renew: bool
    ) -> None:
        self._lock = lock
        super().__init__(workflow_id, token, ttl_s, renew=renew, on_done=lock._forget)

    async def _extend(self) -> bool:
        return self._lock._extend(self.workflow_id, self.token, self.ttl_s)

    async def _delete(self) -> None:
        self._lock._delete(self.workflow_id, self.token)


class InProcessLock:
    """One holder per workflow in this process, with the Redis lock's expiry rules and
    its line of waiting turns (:mod:`app.bus.queue`). No worker of its own can die, so
    it needs no heartbeat: a holder holds until it releases or its TTL lapses."""

    def __init__(self, *, clock: Callable[[], float] | None = None) -> None:
        self._clock = clock or (lambda: asyncio.get_running_loop().time())
        self._held: dict[str, tuple[str, float]] = {}  # workflow -> (token, expires at)
        self._handles: set[RenewingHandle] = set()
        self._lines: dict[str, deque[str]] = {}  # workflow -> waiting tickets, in order

    async def acquire(
        self, workflow_id: str, *, ttl_s: float = 30.0, renew: bool = True
    ) -> InProcessLockHandle | None:
        _check_ttl(ttl_s)
        if not self._free(workflow_id):
            return None
        return self._take(workflow_id, ttl_s, renew=renew)

    def _free(self, workflow_id: str) -> bool:
        held = self._held.get(workflow_id)
        return held is None or held[1] <= self._clock()

    def _take(self, workflow_id: str, ttl_s: float, *, renew: bool) -> InProcessLockHandle:
        token = secrets.token_hex(16)
        self._held[workflow_id] = (token, self._clock() + ttl_s)
        handle = InProcessLockHandle(self, workflow_id, token, ttl_s, renew=renew)
        self._handles.add(handle)
        return handle

    async def join(
        self, workflow_id: str, ticket: str, *, ttl_s: float, max_queue: int
    ) -> tuple[InProcessLockHandle | None, int]:
        _check_ttl(ttl_s)
        line = self._lines.get(workflow_id, deque())
        if not line and self._free(workflow_id):
            return self._take(workflow_id, ttl_s, renew=True), 0
        if len(line) >= max_queue:
            return None, -1
        line.append(ticket)
        self._lines[workflow_id] = line
        return None, len(line)

    async def poll(
        self, workflow_id: str, ticket: str, *, ttl_s: float
    ) -> tuple[InProcessLockHandle | None, int]:
        line = self._lines.get(workflow_id)
        if not line or ticket not in line:
            return None, 0
        if line[0] == ticket and self._free(workflow_id):
            line.popleft()
            return self._take(workflow_id, ttl_s, renew=True), 0
        return None, line.index(ticket) + 1

    async def leave(self, workflow_id: str, ticket: str) -> None:
        line = self._lines.get(workflow_id)
        if line is not None and ticket in line:
            line.remove(ticket)
        if not line:
            self._lines.pop(workflow_id, None)

    def _extend(self, workflow_id: str, token: str, ttl_s: float) -> bool:
        now = self._clock()
        held = self._held.get(workflow_id)
        if held is None or held[0] != token:
            return False
        if held[1] <= now:  # expired before we got to renew: Redis would have dropped it
            del self._held[workflow_id]
            return False
        self._held[workflow_id] = (token, now + ttl_s)
        return True

    def _delete(self, workflow_id: str, token: str) -> None:
        held = self._held.get(workflow_id)
        if held is not None and held[0] == token:
            del self._held[workflow_id]

    def _forget(self, handle: RenewingHandle) -> None:
        self._handles.discard(handle)

    async def close(self) -> None:
        """Release every handle still held (stopping their renewal tasks)."""
        for handle in list(self._handles):
            await handle.release()


def _check_ttl(ttl_s: float) -> None:
    if not ttl_s > 0:
        raise ValueError("ttl_s must be positive")
