"""The bus and lock kit the bus tests share: buses and locks of one backend, cleaned up.

Every kit gets its own key prefix and workflow ids (uuids), so concurrent runs never
collide. Each Redis bus or lock gets its own client, as a separate worker would.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from app.bus import InProcessBus, InProcessLock, RedisBus, RedisLock
from app.bus.redis_client import RedisKeys

REDIS_URL = os.environ.get("PLANWRIGHT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

Bus = InProcessBus | RedisBus
Lock = InProcessLock | RedisLock


class Kit:
    """Makes buses and locks of one backend and cleans them all up."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.prefix = f"pwtest:{uuid.uuid4().hex}"
        self.tag = f"pwtest-{uuid.uuid4().hex[:12]}"
        self.clients: list[aioredis.Redis] = []
        self.buses: list[Bus] = []
        self.locks: list[Lock] = []

    @property
    def is_redis(self) -> bool:
        return self.backend == "redis"

    @staticmethod
    def wf() -> str:
        return f"wf-{uuid.uuid4().hex}"

    async def client(self) -> aioredis.Redis:
        client = aioredis.Redis.from_url(REDIS_URL, client_name=self.tag)
        self.clients.append(client)
        try:
            await client.ping()
        except Exception as exc:
            pytest.fail(f"Redis is not reachable at {REDIS_URL}: {exc!r}")
        return client

    async def bus(self, **options: Any) -> Bus:
        bus: Bus
        if self.is_redis:
            bus = RedisBus(await self.client(), key_prefix=self.prefix, **options)
        else:
            bus = InProcessBus(**options)
        self.buses.append(bus)
        return bus

    async def peer(self, bus: Bus, **options: Any) -> Bus:
        """Another worker's view of ``bus``: the same object in-process, a second
        ``RedisBus`` on its own connection with Redis."""
        return await self.bus(**options) if self.is_redis else bus

    async def lock(self, **options: Any) -> Lock:
        lock: Lock = InProcessLock()
        if self.is_redis:
            lock = RedisLock(await self.client(), key_prefix=self.prefix, **options)
        self.locks.append(lock)
        return lock

    async def peer_lock(self, lock: Lock) -> Lock:
        return await self.lock() if self.is_redis else lock

    def ticket_heartbeat(self, workflow_id: str, ticket: str) -> str:
        """The Redis key of a waiting ticket's heartbeat (the layout the lock's Lua uses)."""
        return f"{RedisKeys(self.prefix).queue(workflow_id)}:alive:{ticket}"

    async def drop_lock(self, lock: Lock, workflow_id: str) -> None:
        """Make the lock vanish behind its holder's back (as if it had expired)."""
        if isinstance(lock, RedisLock):
            await lock.client.delete(lock.key(workflow_id))
        else:
            lock._held.pop(workflow_id, None)

    async def aclose(self) -> None:
        for lock in self.locks:
            await lock.close()
        for bus in self.buses:
            await bus.close()
        if self.clients:
            with contextlib.suppress(RedisConnectionError):  # unreachable: already failed
                async for key in self.clients[0].scan_iter(match=f"{self.prefix}:*"):
                    await self.clients[0].delete(key)
        for client in self.clients:
            await client.aclose()
