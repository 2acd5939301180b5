"""The turn lock across workers, over Redis, with its heartbeat and its line.

Kept apart from the event bus: the lock shares only the client and the key layout
(:mod:`app.bus.redis_client`) with it. A held lock is redis-py's own
:class:`redis.asyncio.lock.Lock` on the lock key, holding the handle's token: renewing
is its ``reacquire`` and releasing its ``release`` (both check the token). Taking the
lock is ours, in Lua, because redis-py's ``acquire`` is ``SET NX`` and knows neither a
holder's heartbeat nor the line; each of those scripts is one atomic step:

- The lock key holds the holder's token and expires after the lock's TTL; a second
  key, the holder's heartbeat, expires after ``heartbeat_s`` and is renewed with the
  lock every third of that. A lock whose holder has no heartbeat is free to take: a
  worker killed mid-turn frees its workflow within ``heartbeat_s``, not the TTL.
- Renew and release touch the keys only while the lock holds the caller's token (a
  holder whose lease lapsed cannot touch its successor's).
- The line (:mod:`app.bus.queue`) is a list of tickets with a heartbeat each; every
  join and poll first drops the tickets whose heartbeat lapsed.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets

import redis.asyncio as aioredis
from redis.asyncio.lock import Lock
from redis.exceptions import LockNotOwnedError
from tenacity import AsyncRetrying, stop_after_attempt, wait_fixed

from app.bus.lock import RenewingHandle
from app.bus.queue import FULL, LOST
from app.bus.redis_client import ClientSource, RedisKeys, resolve_client

DEFAULT_HEARTBEAT_S = 3.0
_UNDO_ATTEMPTS = 20
_UNDO_EVERY_S = 0.5

# KEYS[1] lock, KEYS[2] line. Shared head of every script that may take the lock.
_COMMON = """
local function alive(key) return redis.call('exists', key) == 1 end
local function lock_free()
  local holder = redis.call('get', KEYS[1])
  return (not holder) or (not alive(KEYS[1] .. ':alive:' .. holder))
end
local function take(token, ttl_ms, beat_ms)
  redis.call('set', KEYS[1], token, 'PX', ttl_ms)
  redis.call('set', KEYS[1] .. ':alive:' .. token, '1', 'PX', beat_ms)
end
local function prune()
  for _, t in ipairs(redis.call('lrange', KEYS[2], 0, -1)) do
    if not alive(KEYS[2] .. ':alive:' .. t) then redis.call('lrem', KEYS[2], 0, t) end
  end
end
local function position(ticket)
  for i, t in ipairs(redis.call('lrange', KEYS[2], 0, -1)) do
    if t == ticket then return i end
  end
  return 0
end
"""

# ARGV: token, ttl_ms, beat_ms. 1 when taken.
_ACQUIRE_LUA = (
    _COMMON
    + """
if lock_free() then take(ARGV[1], ARGV[2], ARGV[3]) return 1 end
return 0
"""
)

# ARGV: token, ttl_ms, beat_ms, ticket, max_queue. -2 taken, -1 full, else the position.
_JOIN_LUA = (
    _COMMON
    + """
prune()
if redis.call('llen', KEYS[2]) == 0 and lock_free() then
  take(ARGV[1], ARGV[2], ARGV[3]) return -2
end
if redis.call('llen', KEYS[2]) >= tonumber(ARGV[5]) then return -1 end
redis.call('rpush', KEYS[2], ARGV[4])
redis.call('set', KEYS[2] .. ':alive:' .. ARGV[4], '1', 'PX', ARGV[3])
redis.call('pexpire', KEYS[2], ARGV[2])
return redis.call('llen', KEYS[2])
"""
)

# ARGV: token, ttl_ms, beat_ms, ticket. -2 taken, 0 not in line, else the position.
_POLL_LUA = (
    _COMMON
    + """
local beat = KEYS[2] .. ':alive:' .. ARGV[4]
if position(ARGV[4]) == 0 then return 0 end
redis.call('set', beat, '1', 'PX', ARGV[3])
redis.call('pexpire', KEYS[2], ARGV[2])
prune()
local at = position(ARGV[4])
if at == 1 and lock_free() then
  redis.call('lpop', KEYS[2])
  redis.call('del', beat)
  take(ARGV[1], ARGV[2], ARGV[3])
  return -2
end
return at
"""
)

_LEAVE_LUA = """
redis.call('lrem', KEYS[2], 0, ARGV[1])
redis.call('del', KEYS[2] .. ':alive:' .. ARGV[1])
return 1
"""

_TAKEN = -2


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def _held(client: aioredis.Redis, key: str, token: str, ttl_s: float) -> Lock:
    """redis-py's Lock on ``key``, held by ``token`` (taken by our scripts above)."""
    held = client.lock(key, timeout=ttl_s, thread_local=False)
    held.local.token = token.encode()
    return held


class RedisLockHandle(RenewingHandle):
    def __init__(
        self, lock: RedisLock, workflow_id: str, token: str, ttl_s: float, *, renew: bool
    ) -> None:
        self._lock = lock
        self.key = lock._keys.lock(workflow_id)
        self._held = _held(lock.client, self.key, token, ttl_s)
        super().__init__(
            workflow_id,
            token,
            ttl_s,
            renew=renew,
            on_done=lock._forget,
            every_s=min(ttl_s, lock.heartbeat_s) / 3,
        )

    async def _extend(self) -> bool:
        # The heartbeat first: while the lock is still ours nobody can take it between
        # the two steps; when it is not, the stray heartbeat names no holder and lapses.
        heartbeat = self._lock.heartbeat_key(self.workflow_id, self.token)
        await self._lock.client.set(heartbeat, "1", px=_ms(self._lock.heartbeat_s))
        try:
            await self._held.reacquire()
        except LockNotOwnedError:
            return False
        return True

    async def _delete(self) -> None:
        await self._lock._release(self.workflow_id, self.token)


class RedisLock:
    """The turn lock across workers (see the module's docstring)."""

    def __init__(
        self,
        client: ClientSource,
        *,
        key_prefix: str = "planwright",
        heartbeat_s: float = DEFAULT_HEARTBEAT_S,
    ) -> None:
        if not heartbeat_s > 0:
            raise ValueError("heartbeat_s must be positive")
        self._source = client
        self._keys = RedisKeys(key_prefix)
        self.heartbeat_s = heartbeat_s
        self._handles: set[RenewingHandle] = set()
        self._undoing: set[asyncio.Task[None]] = set()

    @property
    def client(self) -> aioredis.Redis:
        return resolve_client(self._source)

    def key(self, workflow_id: str) -> str:
        return self._keys.lock(workflow_id)

    def heartbeat_key(self, workflow_id: str, token: str) -> str:
        return f"{self._keys.lock(workflow_id)}:alive:{token}"

    def _argv(self, ttl_s: float) -> tuple[str, int, int]:
        if not ttl_s > 0:
            raise ValueError("ttl_s must be positive")
        return secrets.token_hex(16), _ms(ttl_s), _ms(min(self.heartbeat_s, ttl_s))

    def _keys_of(self, workflow_id: str) -> tuple[str, str]:
        return self._keys.lock(workflow_id), self._keys.queue(workflow_id)

    def _handle(self, workflow_id: str, token: str, ttl_s: float, renew: bool) -> RedisLockHandle:
        handle = RedisLockHandle(self, workflow_id, token, ttl_s, renew=renew)
        self._handles.add(handle)
        return handle

    async def _eval(self, script: str, workflow_id: str, token: str, *args: str | int) -> int:
        """Run a script that may take the lock for ``token`` (and put ``args``' ticket
        in line). When no answer comes (Redis hung or dropped the connection), the
        script may still run later, once Redis reads it: undo that in the background, so
        the next turn does not wait out a heartbeat nobody renews."""
        try:
            return int(await self.client.eval(script, 2, *self._keys_of(workflow_id), token, *args))
        except Exception:
            ticket = str(args[2]) if len(args) > 2 else None
            task = asyncio.create_task(self._undo(workflow_id, token, ticket))
            self._undoing.add(task)
            task.add_done_callback(self._undoing.discard)
            raise

    async def _release(self, workflow_id: str, token: str) -> None:
        """Drop ``token``'s heartbeat, and the lock if ``token`` still holds it."""
        client = self.client
        await client.delete(self.heartbeat_key(workflow_id, token))
        with contextlib.suppress(LockNotOwnedError):
            await _held(client, self.key(workflow_id), token, 1.0).release()

    async def _undo(self, workflow_id: str, token: str, ticket: str | None) -> None:
        async def undo() -> None:
            await self._release(workflow_id, token)
            if ticket is not None:
                await self.leave(workflow_id, ticket)

        # Still unreachable: try again, then the heartbeats expire.
        await asyncio.sleep(_UNDO_EVERY_S)
        await AsyncRetrying(
            wait=wait_fixed(_UNDO_EVERY_S),
            stop=stop_after_attempt(_UNDO_ATTEMPTS),
            retry_error_callback=lambda _state: None,
        )(undo)

    async def acquire(
        self, workflow_id: str, *, ttl_s: float = 30.0, renew: bool = True
    ) -> RedisLockHandle | None:
        """The lock unless a live holder has it (the line is not consulted: answers to a
        paused turn and plan builds take it directly)."""
        token, ttl, beat = self._argv(ttl_s)
        if not await self._eval(_ACQUIRE_LUA, workflow_id, token, ttl, beat):
            return None
        return self._handle(workflow_id, token, ttl_s, renew)

    async def join(
        self, workflow_id: str, ticket: str, *, ttl_s: float, max_queue: int
    ) -> tuple[RedisLockHandle | None, int]:
        token, ttl, beat = self._argv(ttl_s)
        result = await self._eval(_JOIN_LUA, workflow_id, token, ttl, beat, ticket, max_queue)
        if result == _TAKEN:
            return self._handle(workflow_id, token, ttl_s, True), 0
        return None, FULL if result == FULL else result

    async def poll(
        self, workflow_id: str, ticket: str, *, ttl_s: float
    ) -> tuple[RedisLockHandle | None, int]:
        token, ttl, beat = self._argv(ttl_s)
        result = await self._eval(_POLL_LUA, workflow_id, token, ttl, beat, ticket)
        if result == _TAKEN:
            return self._handle(workflow_id, token, ttl_s, True), 0
        return None, LOST if result <= 0 else result

    async def leave(self, workflow_id: str, ticket: str) -> None:
        await self.client.eval(_LEAVE_LUA, 2, *self._keys_of(workflow_id), ticket)

    def _forget(self, handle: RenewingHandle) -> None:
        self._handles.discard(handle)

    async def close(self) -> None:
        """Release every handle still held (call before closing the shared client)."""
        for task in list(self._undoing):
            task.cancel()
        await asyncio.gather(*self._undoing, return_exceptions=True)
        for handle in list(self._handles):
            await handle.release()
