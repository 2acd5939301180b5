"""The line of turns waiting for a workflow's lock, in-process and over Redis, and the
Redis lock's holder heartbeat (see app.bus.queue, app.bus.redis_lock).

Nothing here sleeps to let something happen or to keep it from happening: a waiter holds
the lock until those behind it have heard they moved up; a heartbeat's lapse is waited
for (the key gone); "still alive" is only asserted of keys far longer-lived than the
test, and renewals are seen by pinning a key far out and waiting for the holder to bring
it back (a 150 ms heartbeat asserted alive lapsed whenever the loop stalled that long).
"""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from app.bus import RedisLock
from app.bus.queue import FULL, LOST, wait_in_line
from tests.app.bus.helpers import Kit
from tests.waiting import wait_until_async


async def test_a_free_workflow_is_taken_at_once_then_turns_line_up_to_the_bound(kit: Kit) -> None:
    lock = await kit.lock()
    other = await kit.peer_lock(lock)
    wf = kit.wf()
    holder, position = await lock.join(wf, "t0", ttl_s=5, max_queue=2)
    assert holder is not None and position == 0
    assert await other.join(wf, "t1", ttl_s=5, max_queue=2) == (None, 1)
    assert await lock.join(wf, "t2", ttl_s=5, max_queue=2) == (None, 2)
    assert await other.join(wf, "t3", ttl_s=5, max_queue=2) == (None, FULL)
    assert await other.join(kit.wf(), "t4", ttl_s=5, max_queue=0) != (None, FULL)  # free
    await holder.release()


async def test_the_head_of_the_line_takes_the_lock_when_it_is_released(kit: Kit) -> None:
    lock = await kit.lock()
    other = await kit.peer_lock(lock)
    wf = kit.wf()
    holder, _ = await lock.join(wf, "t0", ttl_s=5, max_queue=5)
    assert holder is not None
    await other.join(wf, "t1", ttl_s=5, max_queue=5)
    await lock.join(wf, "t2", ttl_s=5, max_queue=5)
    assert await lock.poll(wf, "t2", ttl_s=5) == (None, 2)
    assert await other.poll(wf, "t1", ttl_s=5) == (None, 1)  # still held
    # A plain acquire does not jump the line's head while the lock is held.
    assert await other.acquire(wf) is None
    await holder.release()
    assert await lock.poll(wf, "t2", ttl_s=5) == (None, 2)  # not first: waits
    taken, _ = await other.poll(wf, "t1", ttl_s=5)
    assert taken is not None
    assert await lock.poll(wf, "t2", ttl_s=5) == (None, 1)
    assert await other.poll(wf, "t1", ttl_s=5) == (None, LOST)  # it left the line
    # A newcomer joins behind the waiter even once the lock is free.
    await taken.release()
    assert await lock.join(wf, "t3", ttl_s=5, max_queue=5) == (None, 2)
    last, _ = await lock.poll(wf, "t2", ttl_s=5)
    assert last is not None
    await last.release()
    await lock.leave(wf, "t3")


async def test_leaving_the_line_moves_those_behind_up(kit: Kit) -> None:
    lock = await kit.lock()
    wf = kit.wf()
    holder, _ = await lock.join(wf, "t0", ttl_s=5, max_queue=5)
    assert holder is not None
    for ticket in ("t1", "t2", "t3"):
        await lock.join(wf, ticket, ttl_s=5, max_queue=5)
    await lock.leave(wf, "t2")
    assert await lock.poll(wf, "t3", ttl_s=5) == (None, 2)
    await lock.leave(wf, "t1")
    assert await lock.poll(wf, "t3", ttl_s=5) == (None, 1)
    await lock.leave(wf, "t3")
    await holder.release()


async def test_waiters_run_in_the_order_they_joined_and_hear_their_positions(kit: Kit) -> None:
    lock = await kit.lock()
    peers = [lock, await kit.peer_lock(lock), await kit.peer_lock(lock)]
    wf = kit.wf()
    holder = await lock.acquire(wf, ttl_s=5)
    assert holder is not None
    heard: dict[int, list[int]] = {0: [], 1: [], 2: []}
    order: list[int] = []

    async def waiter(n: int) -> None:
        async def on_position(position: int) -> None:
            heard[n].append(position)

        handle = await wait_in_line(
            peers[n], wf, ttl_s=5, max_queue=5, on_position=on_position, poll_s=0.02
        )
        assert handle is not None
        order.append(n)
        # Held until everyone behind has heard its place move up (a fixed hold let a
        # waiter that polled late skip straight from 2 to holding the lock).
        await wait_until_async(
            lambda: all(heard[m][-1:] == [m - n] for m in range(n + 1, 3)),
            timeout=10,
            message=lambda: f"the waiters behind {n} never heard they moved up: {heard}",
        )
        await handle.release()

    tasks = []
    for n in range(3):
        tasks.append(asyncio.create_task(waiter(n)))
        # joined: the next one lines up behind it
        await wait_until_async(lambda n=n: heard[n], timeout=10, message=f"waiter {n} never joined")
    await holder.release()
    await asyncio.wait_for(asyncio.gather(*tasks), 10)
    assert order == [0, 1, 2]
    assert heard == {0: [1], 1: [2, 1], 2: [3, 2, 1]}


async def test_a_cancelled_waiter_leaves_the_line(kit: Kit) -> None:
    lock = await kit.lock()
    wf = kit.wf()
    holder = await lock.acquire(wf, ttl_s=5)
    assert holder is not None
    joined = asyncio.Event()

    async def on_position(position: int) -> None:
        joined.set()

    waiting = asyncio.create_task(
        wait_in_line(lock, wf, ttl_s=5, max_queue=1, on_position=on_position, poll_s=0.02)
    )
    await asyncio.wait_for(joined.wait(), 5)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    # Its place is free again: a bound of one admits the next.
    assert await lock.join(wf, "next", ttl_s=5, max_queue=1) == (None, 1)
    await lock.leave(wf, "next")
    await holder.release()


async def test_a_full_line_is_refused(kit: Kit) -> None:
    lock = await kit.lock()
    wf = kit.wf()
    holder = await lock.acquire(wf, ttl_s=5)
    assert holder is not None

    async def never(position: int) -> None:
        raise AssertionError("a refused turn never hears a position")

    assert await wait_in_line(lock, wf, ttl_s=5, max_queue=0, on_position=never) is None
    await holder.release()


async def _gone(probe: aioredis.Redis, key: str) -> bool:
    return not await probe.exists(key)


async def test_a_live_heartbeat_keeps_the_lock_from_others(redis_kit: Kit) -> None:
    lock = await redis_kit.lock(heartbeat_s=60)
    other = await redis_kit.lock(heartbeat_s=0.3)
    assert isinstance(lock, RedisLock)
    probe = await redis_kit.client()
    wf = redis_kit.wf()
    held = await lock.acquire(wf, ttl_s=120, renew=False)
    assert held is not None
    assert 0 < await probe.pttl(lock.heartbeat_key(wf, held.token)) <= 60_000  # heartbeat_s
    assert await other.acquire(wf, ttl_s=30) is None
    await held.release()
    assert await other.acquire(wf, ttl_s=30) is not None


async def test_a_dead_holders_lock_is_taken_once_its_heartbeat_lapses(redis_kit: Kit) -> None:
    lock = await redis_kit.lock(heartbeat_s=0.3)
    other = await redis_kit.lock(heartbeat_s=0.3)
    assert isinstance(lock, RedisLock)
    probe = await redis_kit.client()
    wf = redis_kit.wf()
    dead = await lock.acquire(wf, ttl_s=120, renew=False)  # its worker was killed
    assert dead is not None
    await wait_until_async(
        lambda: _gone(probe, lock.heartbeat_key(wf, dead.token)),
        timeout=10,
        message="the dead holder's heartbeat never lapsed",
    )
    assert await probe.get(lock.key(wf)) == dead.token.encode()  # the lock has not expired
    taker = await other.acquire(wf, ttl_s=30)
    assert taker is not None
    await taker.release()


async def test_a_live_holder_keeps_its_lock_past_many_heartbeats(redis_kit: Kit) -> None:
    """Each renewal writes the heartbeat afresh (for heartbeat_s) and pushes the lock's
    expiry back out to its TTL: pinned ten minutes out, both come back, renewal after
    renewal, while the lock stays the holder's."""
    lock = await redis_kit.lock(heartbeat_s=0.15)
    other = await redis_kit.lock(heartbeat_s=0.15)
    assert isinstance(lock, RedisLock)
    probe = await redis_kit.client()
    wf = redis_kit.wf()
    holder = await lock.acquire(wf, ttl_s=30)
    assert holder is not None
    beat, key = lock.heartbeat_key(wf, holder.token), lock.key(wf)

    async def pinned() -> bool:  # false while the heartbeat is between two renewals' writes
        return bool(await probe.pexpire(beat, 600_000)) and bool(await probe.pexpire(key, 600_000))

    async def renewed() -> bool:
        return await probe.pttl(beat) <= 150 and await probe.pttl(key) <= 30_000

    for renewal in range(3):
        await wait_until_async(pinned, timeout=10, message=f"no heartbeat to pin ({renewal})")
        await wait_until_async(
            renewed, timeout=10, message=f"renewal {renewal + 1} never came: still pinned"
        )
    assert not holder.lost
    assert await probe.get(key) == holder.token.encode()
    await holder.release()
    assert await other.acquire(wf, ttl_s=30) is not None


async def test_a_waiter_whose_heartbeat_lapsed_is_dropped_from_the_line(redis_kit: Kit) -> None:
    lock = await redis_kit.lock(heartbeat_s=60)
    probe = await redis_kit.client()
    wf = redis_kit.wf()
    holder, _ = await lock.join(wf, "t0", ttl_s=120, max_queue=5)
    assert holder is not None
    assert await lock.join(wf, "dead", ttl_s=120, max_queue=5) == (None, 1)
    assert await lock.join(wf, "alive", ttl_s=120, max_queue=5) == (None, 2)
    dead, alive = redis_kit.ticket_heartbeat(wf, "dead"), redis_kit.ticket_heartbeat(wf, "alive")
    assert 0 < await probe.pttl(dead) <= 60_000  # a ticket's heartbeat lives heartbeat_s
    # A poll renews the ticket's heartbeat: aged to 5 s, it is back at heartbeat_s.
    await probe.pexpire(alive, 5_000)
    assert await lock.poll(wf, "alive", ttl_s=120) == (None, 2)
    assert await probe.pttl(alive) > 5_000
    # The dead one's worker stops polling: the last heartbeat it wrote runs out ...
    await probe.pexpire(dead, 100)
    await wait_until_async(
        lambda: _gone(probe, dead), timeout=10, message="the dead waiter's heartbeat never lapsed"
    )
    # ... and the next poll drops it from the line.
    assert await lock.poll(wf, "alive", ttl_s=120) == (None, 1)
    await lock.leave(wf, "alive")
    await holder.release()
