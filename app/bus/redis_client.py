"""The Redis connection and key layout that the event bus and the turn lock share.

Both :class:`~app.bus.redis.RedisBus` and :class:`~app.bus.redis_lock.RedisLock`
take either a ready client or a :class:`LazyRedis` (one client for both, built on
first use), and name their keys through :class:`RedisKeys`, so the layout lives in
one place. Keys (``{p}`` is the key prefix, ``planwright`` by default):

- ``{p}:wf:{id}:events``: pub/sub channel, every event, live.
- ``{p}:wf:{id}:stream``: stream of ``workflow`` events (field ``e``, the JSON),
  capped with ``MAXLEN ~ retention``, for catch-up.
- ``{p}:wf:{id}:lock``: the turn lock (value = the holder's token, expiring after the
  lock's TTL).
- ``{p}:wf:{id}:lock:alive:{token}``: the holder's heartbeat, a short expiry renewed
  while its worker lives; a lock whose holder has no heartbeat is free to take.
- ``{p}:wf:{id}:queue``: the turns waiting for the lock, a list of tickets in order;
  ``{p}:wf:{id}:queue:alive:{ticket}`` is each waiter's heartbeat.
"""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from app.bus.memory import BusClosedError

_POOL_SIZE = 100  # redis-py's default
DEFAULT_TIMEOUT_S = 0.5


class LazyRedis:
    """One ``redis.asyncio.Redis`` for a URL, built on first use (no I/O until then).

    ``timeout_s`` bounds every wait on Redis: connecting, each command's reply and a
    free pooled connection (pub/sub's blocking reads are exempt: redis-py reads those
    untimed)."""

    def __init__(self, url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self._client: aioredis.Redis | None = None
        self._closed = False

    def __call__(self) -> aioredis.Redis:
        if self._closed:
            raise BusClosedError("the Redis client is closed")
        if self._client is None:
            # A blocking pool: with every connection busy (100 turns starting at once,
            # plus the pub/sub connection) a command waits its turn, up to the timeout,
            # instead of failing with "Too many connections" at once.
            # After Redis restarts, every pooled connection is dead: retry a command
            # that fails on one (redis-py reconnects first), so the first turn after an
            # outage does not fail on a stale socket. A command that timed out is not
            # retried: a hung Redis (DEBUG SLEEP, a stopped process) costs one timeout,
            # not four. No health_check_interval: its PING would break the pub/sub
            # connection, which shares these settings.
            pool = aioredis.BlockingConnectionPool.from_url(
                self.url,
                max_connections=_POOL_SIZE,
                timeout=self.timeout_s,
                retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), 2, (RedisConnectionError,)),
                retry_on_error=[RedisConnectionError],
                socket_connect_timeout=self.timeout_s,
                socket_timeout=self.timeout_s,
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

    def queue(self, workflow_id: str) -> str:
        return f"{self.prefix}:wf:{workflow_id}:queue"
