"""The Redis event bus and turn lock, shared by every worker.

Keys (``{p}`` is the key prefix, ``planwright`` by default):

- ``{p}:wf:{id}:events``: pub/sub channel, every event, live.
- ``{p}:wf:{id}:stream``: stream of ``workflow`` events (field ``e``, the JSON),
  capped with ``MAXLEN ~ retention``, for catch-up.
- ``{p}:wf:{id}:lock``: the turn lock (``SET NX PX``, value = the holder's token).

Publishing a ``workflow`` event is ``MULTI XADD [EXPIRE] PUBLISH EXEC``, so stream
order and channel order agree across publishers. Each process keeps one pub/sub
connection (the ``_Dispatcher``) that subscribes a channel while it has local
subscribers and fans messages out to their bounded buffers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Coroutine, Mapping
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.asyncio.connection import Connection
from redis.exceptions import ConnectionError as RedisConnectionError

from app.bus.base import Event
from app.bus.memory import (
    DEFAULT_QUEUE_SIZE,
    DEFAULT_RETENTION,
    BusClosedError,
    BusUnavailableError,
    QueueSubscription,
    RenewingHandle,
    encode_event,
    events_after,
    workflow_version,
)

log = logging.getLogger(__name__)

_REPLAY_BATCH = 100
_POOL_SIZE = 100  # redis-py's default
_POOL_WAIT_S = 20.0

_RENEW_LUA = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""

_RELEASE_LUA = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


class LazyRedis:
    """One ``redis.asyncio.Redis`` for a URL, built on first use (no I/O until then)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._client: aioredis.Redis | None = None
        self._closed = False

    def __call__(self) -> aioredis.Redis:
        if self._closed:
            raise BusClosedError("the Redis client is closed")
        if self._client is None:
            # A blocking pool: with every connection busy (100 turns starting at once,
            # plus the pub/sub connection) a command waits its turn instead of failing
            # with "Too many connections", which the default pool raises.
            pool = aioredis.BlockingConnectionPool.from_url(
                self.url, max_connections=_POOL_SIZE, timeout=_POOL_WAIT_S
            )
            self._client = aioredis.Redis.from_pool(pool)
        return self._client

    @property
    def built(self) -> bool:
        return self._client is not None

    async def aclose(self) -> None:
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


ClientSource = aioredis.Redis | LazyRedis


def _resolve(source: ClientSource) -> aioredis.Redis:
    return source() if isinstance(source, LazyRedis) else source


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _stream_event(fields: Mapping[bytes | str, bytes | str] | None) -> Event | None:
    raw = (fields or {}).get(b"e") or (fields or {}).get("e")
    if raw is None:
        return None
    try:
        event = json.loads(raw)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


class _Keys:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def channel(self, workflow_id: str) -> str:
        return f"{self.prefix}:wf:{workflow_id}:events"

    def stream(self, workflow_id: str) -> str:
        return f"{self.prefix}:wf:{workflow_id}:stream"

    def lock(self, workflow_id: str) -> str:
        return f"{self.prefix}:wf:{workflow_id}:lock"


class _NoReconnectPubSub(PubSub):
    """redis-py reconnects a dropped pub/sub connection and resubscribes silently;
    whatever was published meanwhile would be lost unnoticed. Refuse instead, so the
    dispatcher fails its subscribers and they resubscribe with ``since_version``."""

    async def on_connect(self, connection: Connection) -> None:
        raise RedisConnectionError("the pub/sub connection dropped")


class _Channel:
    def __init__(self) -> None:
        self.subs: set[QueueSubscription] = set()
        self.acks_needed: int | None = None  # set when its SUBSCRIBE is sent
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()


class _Dispatcher:
    """One pub/sub connection for this process, fanning out to local subscribers.

    Channel (un)subscriptions go through one lock, in order, and are shielded from
    cancellation so Redis's view never drifts from ``_channels``. Confirmations are
    counted per channel, so an entry is only ready once Redis has confirmed *its*
    SUBSCRIBE (not an older one for the same channel).
    """

    def __init__(self, client: aioredis.Redis) -> None:
        self._pubsub = _NoReconnectPubSub(client.connection_pool)
        self._channels: dict[str, _Channel] = {}
        self._sent: dict[str, int] = {}  # SUBSCRIBE commands sent, per channel
        self._acked: dict[str, int] = {}  # confirmations received, per channel
        self._lock = asyncio.Lock()
        self._commands: set[asyncio.Task[None]] = set()
        self._reader: asyncio.Task[None] | None = None
        self.dead = False

    async def add(self, channel: str, sub: QueueSubscription, timeout_s: float) -> None:
        """Register ``sub``; returns once Redis has confirmed the channel subscription."""
        self._check_alive()
        entry = self._channels.get(channel)
        if entry is None:
            entry = self._channels[channel] = _Channel()
            entry.subs.add(sub)
            await self._run(self._subscribe(channel, entry))
        else:
            entry.subs.add(sub)
        try:
            await asyncio.wait_for(asyncio.shield(entry.ready), timeout_s)
        except TimeoutError:
            raise BusUnavailableError("Redis did not confirm the subscription in time") from None

    async def remove(self, channel: str, sub: QueueSubscription) -> None:
        entry = self._channels.get(channel)
        if entry is None or sub not in entry.subs:
            return
        entry.subs.discard(sub)
        if entry.subs or self.dead:
            return
        del self._channels[channel]
        if not entry.ready.done():
            entry.ready.cancel()
        try:
            await self._run(self._unsubscribe(channel))
        except Exception as exc:  # the reader sees the same failure and tears down
            log.debug("unsubscribe from %s failed: %r", channel, exc)

    async def _run(self, command: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(command)
        self._commands.add(task)
        task.add_done_callback(self._command_done)
        await asyncio.shield(task)

    def _command_done(self, task: asyncio.Task[None]) -> None:
        self._commands.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved even when its caller was cancelled meanwhile

    async def _subscribe(self, channel: str, entry: _Channel) -> None:
        async with self._lock:
            self._check_alive()
            entry.acks_needed = self._sent[channel] = self._sent.get(channel, 0) + 1
            try:
                await self._pubsub.subscribe(channel)
            except Exception as exc:
                error = BusUnavailableError(f"event bus connection lost: {exc}")
                self._fail(error)
                raise error from exc
            if self._reader is None:
                self._reader = asyncio.create_task(self._read(), name="planwright-bus-reader")

    async def _unsubscribe(self, channel: str) -> None:
        async with self._lock:
            if not self.dead:
                await self._pubsub.unsubscribe(channel)

    def _check_alive(self) -> None:
        if self.dead:
            raise BusUnavailableError("event bus connection lost")

    def _on_confirmed(self, channel: str) -> None:
        acked = self._acked[channel] = self._acked.get(channel, 0) + 1
        entry = self._channels.get(channel)
        if (
            entry is not None
            and entry.acks_needed is not None
            and acked >= entry.acks_needed
            and not entry.ready.done()
        ):
            entry.ready.set_result(None)
        if acked >= self._sent.get(channel, 0):  # nothing in flight: forget the counts
            self._acked.pop(channel, None)
            self._sent.pop(channel, None)

    async def _read(self) -> None:
        try:
            while True:
                message = await self._pubsub.get_message(timeout=None)
                if message is not None:
                    self._handle(message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("event bus pub/sub connection failed: %r", exc)
            self._fail(BusUnavailableError(f"event bus connection lost: {exc}"))
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "subscribe":
            self._on_confirmed(_text(message["channel"]))
        elif kind == "message":
            channel = _text(message["channel"])
            entry = self._channels.get(channel)
            if entry is None:
                return
            try:
                event = json.loads(message["data"])
            except ValueError:
                log.warning("dropping a malformed event on %s", channel)
                return
            for sub in list(entry.subs):
                sub.deliver(event)

    def _fail(self, error: BusUnavailableError) -> None:
        self.dead = True
        for entry in self._channels.values():
            if not entry.ready.done():
                entry.ready.set_exception(error)
                entry.ready.exception()  # retrieved: no "never retrieved" warning
            for sub in entry.subs:
                sub.fail(error)
        self._channels.clear()

    async def close(self) -> None:
        self.dead = True
        tasks = [*self._commands, *([self._reader] if self._reader else [])]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        for entry in self._channels.values():
            if not entry.ready.done():
                entry.ready.cancel()
            for sub in entry.subs:
                sub.end()
        self._channels.clear()
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()


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
        self._keys = _Keys(key_prefix)
        self.retention = retention
        self.queue_size = queue_size
        self.stream_ttl_s = stream_ttl_s
        self.subscribe_timeout_s = subscribe_timeout_s
        self._owns_client = owns_client
        self._dispatcher: _Dispatcher | None = None
        self._closed = False

    @property
    def client(self) -> aioredis.Redis:
        return _resolve(self._source)

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
            self._dispatcher = _Dispatcher(self.client)
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
                    upper = f"({_text(entry_id)}"
            if len(entries) < _REPLAY_BATCH:
                return events_after(reversed(newest_first), since_version)

    def local_subscribers(self, workflow_id: str) -> int:
        dispatcher = self._dispatcher
        if dispatcher is None or dispatcher.dead:
            return 0
        entry = dispatcher._channels.get(self._keys.channel(workflow_id))
        return 0 if entry is None else len(entry.subs)

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


class RedisLockHandle(RenewingHandle):
    def __init__(
        self, lock: RedisLock, workflow_id: str, token: str, ttl_s: float, *, renew: bool
    ) -> None:
        self._lock = lock
        self.key = lock._keys.lock(workflow_id)
        super().__init__(workflow_id, token, ttl_s, renew=renew, on_done=lock._forget)

    async def _extend(self) -> bool:
        ttl_ms = max(1, int(self.ttl_s * 1000))
        result = await self._lock.client.eval(_RENEW_LUA, 1, self.key, self.token, ttl_ms)
        return bool(result)

    async def _delete(self) -> None:
        await self._lock.client.eval(_RELEASE_LUA, 1, self.key, self.token)


class RedisLock:
    """The turn lock across workers: ``SET key token NX PX ttl``, renewed and released
    only by the holder of ``token`` (compare-and-set Lua scripts)."""

    def __init__(self, client: ClientSource, *, key_prefix: str = "planwright") -> None:
        self._source = client
        self._keys = _Keys(key_prefix)
        self._handles: set[RenewingHandle] = set()

    @property
    def client(self) -> aioredis.Redis:
        return _resolve(self._source)

    def key(self, workflow_id: str) -> str:
        return self._keys.lock(workflow_id)

    async def acquire(
        self, workflow_id: str, *, ttl_s: float = 30.0, renew: bool = True
    ) -> RedisLockHandle | None:
        if not ttl_s > 0:
            raise ValueError("ttl_s must be positive")
        token = secrets.token_hex(16)
        ttl_ms = max(1, int(ttl_s * 1000))
        if not await self.client.set(self.key(workflow_id), token, nx=True, px=ttl_ms):
            return None
        handle = RedisLockHandle(self, workflow_id, token, ttl_s, renew=renew)
        self._handles.add(handle)
        return handle

    def _forget(self, handle: RenewingHandle) -> None:
        self._handles.discard(handle)

    async def close(self) -> None:
        """Release every handle still held (call before closing the shared client)."""
        for handle in list(self._handles):
            await handle.release()
