"""The turn lock contract, in-process and over Redis (see conftest.Kit).

Sleeping past a TTL to see it expire is sound (it can only have run out); asserting a lock
is still held, or that a renewal has run, after a fixed sleep is not (a stalled loop lets
a 0.3 s TTL lapse): those wait for the renewal itself, under an injected clock in-process
and with the key's remaining life far longer than any stall over Redis.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from app.bus import InProcessLock, RedisLock
from app.bus.lock import RenewingHandle
from tests.app.bus.helpers import Kit
from tests.waiting import wait_until_async


async def test_second_acquire_gets_none(kit: Kit) -> None:
    lock = await kit.lock()
    other = await kit.peer_lock(lock)
    wf = kit.wf()
    handle = await lock.acquire(wf)
    assert handle is not None and handle.token
    assert await other.acquire(wf) is None
    assert await lock.acquire(wf) is None
    assert await other.acquire(kit.wf()) is not None  # other workflows are independent
    await handle.release()


async def test_release_then_acquire(kit: Kit) -> None:
    lock = await kit.lock()
    other = await kit.peer_lock(lock)
    wf = kit.wf()
    first = await lock.acquire(wf)
    assert first is not None
    await first.release()
    await first.release()  # idempotent
    second = await other.acquire(wf)
    assert second is not None and second.token != first.token
    await second.release()


async def test_lock_expires_when_its_holder_stops_renewing(kit: Kit) -> None:
    lock = await kit.lock()
    other = await kit.peer_lock(lock)
    wf = kit.wf()
    dead = await lock.acquire(wf, ttl_s=0.2, renew=False)  # a worker that died
    assert dead is not None
    # (Refused while it lives: test_second_acquire_gets_none; asserted here it raced the TTL.)
    await asyncio.sleep(0.35)
    taker = await other.acquire(wf)
    assert taker is not None
    await taker.release()


async def test_cancelled_renewal_lets_the_lock_expire(kit: Kit) -> None:
    lock = await kit.lock()
    wf = kit.wf()
    handle = await lock.acquire(wf, ttl_s=0.3)
    assert handle is not None
    await handle.stop_renewal()
    await asyncio.sleep(0.5)
    taker = await (await kit.peer_lock(lock)).acquire(wf)
    assert taker is not None
    await taker.release()


async def test_stale_release_keeps_the_new_holders_lock(kit: Kit) -> None:
    lock = await kit.lock()
    other = await kit.peer_lock(lock)
    wf = kit.wf()
    stale = await lock.acquire(wf, ttl_s=0.2, renew=False)
    assert stale is not None
    await asyncio.sleep(0.35)
    current = await other.acquire(wf, ttl_s=5)
    assert current is not None
    await stale.release()  # must not delete `current`'s lock
    assert await lock.acquire(wf) is None
    assert await other.acquire(wf) is None
    await current.release()
    again = await lock.acquire(wf)
    assert again is not None
    await again.release()


async def test_renewal_keeps_the_lock_past_its_ttl() -> None:
    """In-process, on an injected clock: four times the TTL goes by, each step short of
    it, and after each a renewal has moved the expiry on; nobody else gets the lock."""
    now = [1000.0]
    lock = InProcessLock(clock=lambda: now[0])
    wf = "wf"
    handle = await lock.acquire(wf, ttl_s=0.3)  # renewed every 0.1 s (real time)
    assert handle is not None
    for _ in range(5):
        now[0] += 0.25
        await wait_until_async(
            lambda: lock._held[wf][1] == now[0] + 0.3,
            timeout=10,
            message="no renewal moved the expiry on",
        )
        assert await lock.acquire(wf) is None
    assert not handle.lost
    await handle.release()
    taker = await lock.acquire(wf)
    assert taker is not None
    await taker.release()


async def test_renewal_keeps_a_redis_lock_past_its_ttl(redis_kit: Kit) -> None:
    """Over Redis: aged to its last 5 s, the lock gets its whole TTL back from the next
    renewal, three times over, and stays the holder's. (Others are kept off by the
    heartbeat too, which a stall of 0.3 s would let lapse: test_turn_line checks that
    refusal under a long heartbeat.)"""
    lock = await redis_kit.lock(heartbeat_s=0.3)  # renewed every 0.1 s
    other = await redis_kit.lock()
    assert isinstance(lock, RedisLock)
    probe = await redis_kit.client()
    wf = redis_kit.wf()
    handle = await lock.acquire(wf, ttl_s=30)
    assert handle is not None
    key = lock.key(wf)

    async def renewed() -> bool:
        return await probe.pttl(key) > 5_000

    for _ in range(3):
        assert await probe.pexpire(key, 5_000)
        await wait_until_async(renewed, timeout=10, message="no renewal gave the TTL back")
        assert await probe.get(key) == handle.token.encode()
    assert not handle.lost
    await handle.release()
    taker = await other.acquire(wf)
    assert taker is not None
    await taker.release()


async def test_renewal_notices_a_lost_lock(kit: Kit) -> None:
    lock = await kit.lock()
    other = await kit.peer_lock(lock)
    wf = kit.wf()
    handle = await lock.acquire(wf, ttl_s=0.3)
    assert handle is not None
    await kit.drop_lock(lock, wf)  # it expired behind the holder's back...
    taker = await other.acquire(wf, ttl_s=5)  # ...and someone else took it
    assert taker is not None
    await wait_until_async(lambda: handle.lost, timeout=10, message="the loss went unnoticed")
    assert await lock.acquire(wf) is None  # renewal did not steal it back
    await handle.release()
    assert await lock.acquire(wf) is None  # nor did the release delete it
    await taker.release()


async def test_concurrent_acquires_have_one_winner(kit: Kit) -> None:
    lock = await kit.lock()
    other = await kit.peer_lock(lock)
    for _ in range(20):
        wf = kit.wf()
        results = await asyncio.gather(*(lk.acquire(wf) for lk in (lock, other, lock, other)))
        winners = [h for h in results if h is not None]
        assert len(winners) == 1
        await winners[0].release()


async def test_close_releases_held_locks_and_stops_renewal(kit: Kit) -> None:
    lock = await kit.lock()
    wf = kit.wf()
    handle = await lock.acquire(wf, ttl_s=10)
    assert handle is not None
    await lock.close()
    assert handle.released
    again = await lock.acquire(wf)
    assert again is not None
    await again.release()


async def test_ttl_must_be_positive(kit: Kit) -> None:
    lock = await kit.lock()
    with pytest.raises(ValueError):
        await lock.acquire(kit.wf(), ttl_s=0)


async def test_in_process_lock_follows_the_injected_clock() -> None:
    now = [1000.0]
    lock = InProcessLock(clock=lambda: now[0])
    handle = await lock.acquire("wf", ttl_s=30, renew=False)
    assert handle is not None
    now[0] += 29.9
    assert await lock.acquire("wf") is None
    now[0] += 0.2
    taker = await lock.acquire("wf", renew=False)
    assert taker is not None
    await handle.release()
    assert await lock.acquire("wf") is None
    await taker.release()


async def test_the_redis_lock_is_a_redis_py_lock_on_its_key(redis_kit: Kit) -> None:
    """Another client's redis-py ``Lock`` on the same key is held off while a turn
    holds it, and takes it once the turn releases."""
    lock = await redis_kit.lock()
    assert isinstance(lock, RedisLock)
    wf = redis_kit.wf()
    handle = await lock.acquire(wf, ttl_s=5)
    assert handle is not None
    probe = await redis_kit.client()
    key = f"{redis_kit.prefix}:wf:{wf}:lock"
    assert lock.key(wf) == key
    outsider = probe.lock(key, timeout=5)
    assert not await outsider.acquire(blocking=False)
    await handle.release()
    assert await outsider.acquire(blocking=False)
    await outsider.release()


class _SwallowingHandle(RenewingHandle):
    """A handle whose first renewal call swallows a cancel, as redis-py's socket calls can
    under Python 3.11: ``asyncio.wait_for`` returns the wrapped call's result when the
    cancel lands just as that call completes."""

    def __init__(self) -> None:
        self.renewing = asyncio.Event()
        self.calls = 0
        super().__init__("wf", "token", 30.0, renew=True, on_done=lambda _: None, every_s=0.001)

    async def _extend(self) -> bool:
        self.calls += 1
        self.renewing.set()
        if self.calls > 1:  # later calls are cancelled as usual
            await asyncio.Event().wait()
        with contextlib.suppress(asyncio.CancelledError):  # swallowed: the call "completed"
            await asyncio.Event().wait()  # a Redis call in flight
        return True

    async def _delete(self) -> None:
        pass


async def test_release_ends_a_renewal_whose_cancel_was_swallowed() -> None:
    """The renewal stops once told to, even when its cancel never arrives (it used to loop
    on, and ``release`` waited for it forever: a Redis lock test hung so)."""
    handle = _SwallowingHandle()
    await asyncio.wait_for(handle.renewing.wait(), 5)
    releasing = asyncio.ensure_future(handle.release())
    await wait_until_async(
        releasing.done, timeout=5, message="release never returned: the renewal loops on"
    )
    assert releasing.exception() is None
    assert handle.released and not handle.lost
