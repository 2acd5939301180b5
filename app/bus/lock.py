"""The turn lock's handle shape and the in-process turn lock.

``RenewingHandle`` is the one lock handle shape: a background task renews the lock
(every ``ttl/3`` unless told otherwise) and flags ``lost`` when the lock turns out
to be gone. ``InProcessLock`` has the Redis lock's expiry rules and its line of
waiting turns (:mod:`app.bus.queue`). Everything here runs on one event loop.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable

log = logging.getLogger(__name__)


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
        self._stopping = False
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
        # Stopping is also a flag, not only the task's cancellation: a client library may
        # swallow a cancel (Python 3.11's ``asyncio.wait_for``, inside redis-py's socket
        # calls, returns the call's result when the cancel lands just as it completes),
        # and the renewal then looped on while ``stop_renewal`` waited for it forever.
        while not self._stopping:
            await asyncio.sleep(self.every_s)
            if self._stopping:
                return
            try:
                held = await self._extend()
            except Exception:  # a transient failure: keep trying while the lock may live
                if self._stopping:
                    return
                log.warning("renewing the turn lock of %s failed", self.workflow_id, exc_info=True)
                if loop.time() - last_ok < self.ttl_s:
                    continue
                held = False
            if self._stopping:  # stopped meanwhile (its cancel swallowed): not lost
                return
            if not held:
                log.warning("lost the turn lock of %s", self.workflow_id)
                self.lost = True
                return
            last_ok = loop.time()

    async def stop_renewal(self) -> None:
        """Stop renewing without releasing (the lock then expires after ``ttl_s``)."""
        self._stopping = True
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
