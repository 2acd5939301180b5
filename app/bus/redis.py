"""The Redis event bus, shared by every worker; the Redis names' import point.

Publishing a ``workflow`` event is ``MULTI XADD [EXPIRE] PUBLISH EXEC``, so stream
order and channel order agree across publishers. Live delivery goes through this
process's one pub/sub connection (:class:`~app.bus.redis_dispatch.Dispatcher`);
catch-up reads the capped stream. The key layout and the shared client are in
:mod:`app.bus.redis_client`, the turn lock in :mod:`app.bus.redis_lock`; both are
re-exported here, so ``from app.bus.redis import LazyRedis, RedisBus, RedisLock``
works.
"""

from __future__ import annotations

from collections.abc import Mapping

import redis.asyncio as aioredis

from app.bus.base import EncodedEvent, Event
from app.bus.memory import (
    DEFAULT_QUEUE_SIZE,
    DEFAULT_RETENTION,
    BusClosedError,
    QueueSubscription,
    encode_event,
    events_after,
    workflow_version,
)
from app.bus.redis_client import ClientSource, LazyRedis, RedisKeys, as_text, resolve_client
from app.bus.redis_dispatch import Dispatcher
from app.bus.redis_lock import RedisLock, RedisLockHandle

__all__ = ["ClientSource", "LazyRedis", "RedisBus", "RedisLock", "RedisLockHandle"]

_REPLAY_BATCH = 100


def _stream_event(fields: Mapping[bytes | str, bytes | str] | None) -> Event | None:
    raw = (fields or {}).get(b"e") or (fields or {}).get("e")
    if raw is None:
        return None
    try:
        return EncodedEvent(as_text(raw))
    except ValueError:
        return None


class RedisBus:
    """The event bus over Redis pub/sub (live) and capped streams (catch-up)."""

    def __init__(
        self,
        client: ClientSource,
        *,
        key_prefix: str = "planwright",
        retention: int = DEFAULT_RETENTION,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        stream_ttl_s: int | None = 7 * 24 * 3600,
        subscribe_timeout_s: float = 10.0,
        owns_client: bool = False,
    ) -> None:
        if retention < 1 or queue_size < 1:
            raise ValueError("retention and queue_size must be at least 1")
        self._source = client
        self._keys = RedisKeys(key_prefix)
        self.retention = retention
        self.queue_size = queue_size
        self.stream_ttl_s = stream_ttl_s
        self.subscribe_timeout_s = subscribe_timeout_s
        self._owns_client = owns_client
        self._dispatcher: Dispatcher | None = None
        self._closed = False

    @property
    def client(self) -> aioredis.Redis:
        return resolve_client(self._source)

    async def publish(self, workflow_id: str, event: Event) -> None:
        self._check_open()
        payload = encode_event(event)
        channel = self._keys.channel(workflow_id)
        if workflow_version(event) is None:
            await self.client.publish(channel, payload)
            return
        stream = self._keys.stream(workflow_id)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.xadd(stream, {"e": payload}, maxlen=self.retention, approximate=True)
            if self.stream_ttl_s is not None:
                pipe.expire(stream, self.stream_ttl_s)
            pipe.publish(channel, payload)
            await pipe.execute()

    async def subscribe(
        self, workflow_id: str, *, since_version: int | None = None
    ) -> QueueSubscription:
        self._check_open()
        if self._dispatcher is None or self._dispatcher.dead:
            self._dispatcher = Dispatcher(self.client)
        dispatcher = self._dispatcher
        channel = self._keys.channel(workflow_id)

        async def on_close(sub: QueueSubscription) -> None:
            await dispatcher.remove(channel, sub)

        sub = QueueSubscription(workflow_id, maxsize=self.queue_size, on_close=on_close)
        try:
            await dispatcher.add(channel, sub, self.subscribe_timeout_s)
            if since_version is not None:  # only now: anything newer is also on the channel
                replay = await self._retained_after(workflow_id, since_version)
                sub.start_after(since_version, replay)
        except BaseException:
            await sub.close()
            raise
        return sub

    async def _retained_after(self, workflow_id: str, since_version: int) -> list[Event]:
        """Retained ``workflow`` events newer than ``since_version``, read newest first
        in batches and stopping at the first one the subscriber already has."""
        stream = self._keys.stream(workflow_id)
        newest_first: list[Event] = []
        upper = "+"
        while True:
            batch = await self.client.xrevrange(stream, max=upper, min="-", count=_REPLAY_BATCH)
            entries = batch or []
            for entry_id, fields in entries:
                event = _stream_event(fields)
                version = workflow_version(event) if event is not None else None
                if version is not None and version <= since_version:
                    return events_after(reversed(newest_first), since_version)
                if event is not None:
                    newest_first.append(event)
                if entry_id is not None:
                    upper = f"({as_text(entry_id)}"
            if len(entries) < _REPLAY_BATCH:
                return events_after(reversed(newest_first), since_version)

    def local_subscribers(self, workflow_id: str) -> int:
        dispatcher = self._dispatcher
        if dispatcher is None or dispatcher.dead:
            return 0
        return dispatcher.local_subscribers(self._keys.channel(workflow_id))

    def _check_open(self) -> None:
        if self._closed:
            raise BusClosedError("the event bus is closed")

    async def close(self) -> None:
        self._closed = True
        dispatcher, self._dispatcher = self._dispatcher, None
        if dispatcher is not None:
            await dispatcher.close()
        if self._owns_client:
            await self._source.aclose()
