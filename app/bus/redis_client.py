"""The Redis connection and key layout that the event bus and the turn lock share.

Both :class:`~app.bus.redis.RedisBus` and :class:`~app.bus.redis_lock.RedisLock`
take either a ready client or a :class:`LazyRedis` (one client for both, built on
first use), and name their keys through :class:`RedisKeys`, so the layout lives in
one place. Keys (``{p}`` is the key prefix, ``planwright`` by default):

- ``{p}:wf:{id}:events``: pub/sub channel, every event, live.
- ``{p}:wf:{id}:stream``: stream of ``workflow`` events (field ``e``, the JSON),
  capped with ``MAXLEN ~ retention``, for catch-up.
- ``{p}:wf:{id}:lock``: the turn lock (``SET NX PX``, value = the holder's token).
"""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.bus.memory import BusClosedError

_POOL_SIZE = 100  # redis-py's default
_POOL_WAIT_S = 20.0
_CONNECT_TIMEOUT_S = 2.0
_COMMAND_TIMEOUT_S = 5.0  # pub/sub's blocking reads are exempt (redis-py reads those untimed)


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
            # After Redis restarts, every pooled connection is dead: retry a command
            # that fails on one (redis-py reconnects first), so the first turn after an
            # outage does not fail on a stale socket. No health_check_interval: its
            # PING would break the pub/sub connection, which shares these settings.
            # Timeouts keep an unreachable Redis from hanging a request.
            pool = aioredis.BlockingConnectionPool.from_url(
                self.url,
                max_connections=_POOL_SIZE,
                timeout=_POOL_WAIT_S,
                retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), 3),
                retry_on_error=[RedisConnectionError, RedisTimeoutError],
                socket_connect_timeout=_CONNECT_TIMEOUT_S,
                socket_timeout=_COMMAND_TIMEOUT_S,
                socket_keepalive=True,
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


def resolve_client(source: ClientSource) -> aioredis.Redis:
    return source() if isinstance(source, LazyRedis) else source


def as_text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisKeys:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def channel(self, workflow_id: str) -> str:
        return f"{self.prefix}:wf:{workflow_id}:events"

    def stream(self, workflow_id: str) -> str:
        return f"{self.prefix}:wf:{workflow_id}:stream"

    def lock(self, workflow_id: str) -> str:
        return f"{self.prefix}:wf:{workflow_id}:lock"
