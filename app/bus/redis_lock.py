"""The turn lock across workers, over Redis.

Kept apart from the event bus: the lock shares only the client and the key layout
(:mod:`app.bus.redis_client`) with it, and its correctness rests on the two
compare-and-set scripts below, which renew or release the key only while it still
holds the caller's token (a holder whose lease lapsed cannot touch its successor's).
"""

from __future__ import annotations

import secrets

import redis.asyncio as aioredis

from app.bus.memory import RenewingHandle
from app.bus.redis_client import ClientSource, RedisKeys, resolve_client

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
        self._keys = RedisKeys(key_prefix)
        self._handles: set[RenewingHandle] = set()

    @property
    def client(self) -> aioredis.Redis:
        return resolve_client(self._source)

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
