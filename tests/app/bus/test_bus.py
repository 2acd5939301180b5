"""The event bus contract, in-process and over Redis (see conftest.Kit)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from app.bus import (
    BusClosedError,
    BusUnavailableError,
    InProcessBus,
    InProcessLock,
    LazyRedis,
    RedisBus,
    RedisLock,
    SubscriberOverflowError,
    make_bus,
)
from app.bus.base import Event, Subscription
from tests.app.bus.helpers import REDIS_URL, Kit
from tests.waiting import wait_until_async

TIMEOUT = 10.0


def wf_event(version: int, **extra: Any) -> Event:
    return {"type": "workflow", "version": version, "yaml": f"v{version}", **extra}


async def take(sub: Subscription, count: int) -> list[Event]:
    async def run() -> list[Event]:
        got: list[Event] = []
        async for event in sub:
            got.append(event)
            if len(got) == count:
                break
        return got

    return await asyncio.wait_for(run(), TIMEOUT)


async def take_until(sub: Subscription, marker: str) -> list[Event]:
    """Events up to (not including) the status event whose text is ``marker``."""

    async def run() -> list[Event]:
        got: list[Event] = []
        async for event in sub:
            if event.get("text") == marker:
                return got
            got.append(event)
        raise AssertionError("subscription ended before the marker")

    return await asyncio.wait_for(run(), TIMEOUT)


def versions(events: list[Event]) -> list[int]:
    return [e["version"] for e in events]


async def test_events_arrive_in_publish_order(kit: Kit) -> None:
    bus = await kit.bus()
    wf = kit.wf()
    sub = await bus.subscribe(wf)
    sent: list[Event] = []
    for i in range(1, 41):
        sent.append(wf_event(i) if i % 3 else {"type": "status", "phase": "spinner", "n": i})
    for event in sent:
        await bus.publish(wf, event)
    assert await take(sub, len(sent)) == sent
    await sub.close()


async def test_two_subscribers_each_get_everything(kit: Kit) -> None:
    bus = await kit.bus()
    other = await kit.peer(bus)
    wf = kit.wf()
    first = await bus.subscribe(wf)
    second = await other.subscribe(wf)
    for v in range(1, 21):
        await bus.publish(wf, wf_event(v))
    assert versions(await take(first, 20)) == list(range(1, 21))
    assert versions(await take(second, 20)) == list(range(1, 21))
    await first.close()
    await second.close()


async def test_workflows_are_isolated(kit: Kit) -> None:
    bus = await kit.bus()
    wf_a, wf_b = kit.wf(), kit.wf()
    sub = await bus.subscribe(wf_a)
    await bus.publish(wf_b, wf_event(1, who="b"))
    await bus.publish(wf_a, wf_event(1, who="a"))
    assert (await take(sub, 1))[0]["who"] == "a"
    sub_b = await bus.subscribe(wf_b, since_version=0)
    await bus.publish(wf_b, {"type": "status", "text": "end"})
    assert [e["who"] for e in await take_until(sub_b, "end")] == ["b"]
    await sub.close()
    await sub_b.close()


async def test_subscribing_without_since_version_replays_nothing(kit: Kit) -> None:
    bus = await kit.bus()
    wf = kit.wf()
    for v in range(1, 4):
        await bus.publish(wf, wf_event(v))
    sub = await bus.subscribe(wf)
    await bus.publish(wf, wf_event(4))
    assert versions(await take(sub, 1)) == [4]
    await sub.close()


async def test_since_version_replays_missed_workflow_events_then_goes_live(kit: Kit) -> None:
    bus = await kit.bus()
    watcher_bus = await kit.peer(bus)
    wf = kit.wf()
    for v in range(1, 6):
        await bus.publish(wf, wf_event(v))
        await bus.publish(wf, {"type": "status", "phase": "settled", "v": v})  # not retained
    sub = await watcher_bus.subscribe(wf, since_version=2)
    await bus.publish(wf, wf_event(6))
    got = await take(sub, 4)
    assert versions(got) == [3, 4, 5, 6]
    assert got[0] == wf_event(3)
    await sub.close()


async def test_since_version_at_or_past_the_latest_replays_nothing(kit: Kit) -> None:
    bus = await kit.bus()
    wf = kit.wf()
    for v in range(1, 4):
        await bus.publish(wf, wf_event(v))
    current = await bus.subscribe(wf, since_version=3)
    ahead = await bus.subscribe(wf, since_version=10)
    fresh = await bus.subscribe(kit.wf(), since_version=0)  # nothing retained at all
    await bus.publish(wf, wf_event(4))
    await bus.publish(wf, {"type": "status", "text": "end"})
    assert versions(await take_until(current, "end")) == [4]
    assert await take_until(ahead, "end") == []  # versions it claims to have are skipped
    await current.close()
    await ahead.close()
    await fresh.close()


@pytest.mark.parametrize("existing_watcher", [False, True])
async def test_catch_up_racing_publishes_has_no_gaps_or_duplicates(
    kit: Kit, existing_watcher: bool
) -> None:
    bus = await kit.bus()
    watcher_bus = await kit.peer(bus)
    rng = random.Random(5)
    total = 40
    for _ in range(15):
        wf = kit.wf()
        early = await watcher_bus.subscribe(wf) if existing_watcher else None

        async def publisher(wf: str = wf) -> None:
            for v in range(1, total + 1):
                await bus.publish(wf, wf_event(v))
                await asyncio.sleep(0)

        task = asyncio.create_task(publisher())
        for _ in range(rng.randint(0, 30)):
            await asyncio.sleep(0)
        since = rng.randint(0, 15)
        sub = await watcher_bus.subscribe(wf, since_version=since)
        got = await take(sub, total - since)
        await task
        assert versions(got) == list(range(since + 1, total + 1))
        await sub.close()
        if early is not None:
            assert versions(await take(early, total)) == list(range(1, total + 1))
            await early.close()


async def test_retention_is_capped(kit: Kit) -> None:
    retention, published = 10, 250
    bus = await kit.bus(retention=retention)
    wf = kit.wf()
    for v in range(1, published + 1):
        await bus.publish(wf, wf_event(v))
    sub = await bus.subscribe(wf, since_version=0)
    await bus.publish(wf, {"type": "status", "text": "end"})
    kept = versions(await take_until(sub, "end"))
    assert kept == list(range(kept[0], published + 1))  # the newest, contiguous
    if kit.is_redis:  # XADD MAXLEN ~ trims whole stream nodes: at least N, roughly N
        assert retention <= len(kept) < published
    else:
        assert len(kept) == retention
    await sub.close()


async def test_closed_subscription_stops(kit: Kit) -> None:
    bus = await kit.bus()
    wf = kit.wf()
    sub = await bus.subscribe(wf)
    keep = await bus.subscribe(wf)
    assert bus.local_subscribers(wf) == 2

    async def read_all() -> list[Event]:
        return [event async for event in sub]

    reader = asyncio.create_task(read_all())
    await bus.publish(wf, wf_event(1))
    assert versions(await take(keep, 1)) == [1]
    await sub.close()
    assert versions(await asyncio.wait_for(reader, TIMEOUT)) == [1]  # the blocked reader ends
    await bus.publish(wf, wf_event(2))
    assert versions(await take(keep, 1)) == [2]
    assert [event async for event in sub] == []
    assert bus.local_subscribers(wf) == 1
    await sub.close()  # idempotent
    async with keep:
        pass
    assert bus.local_subscribers(wf) == 0


async def test_slow_consumer_overflows_without_blocking_others(kit: Kit) -> None:
    bus = await kit.bus(queue_size=8)
    wf = kit.wf()
    slow = await bus.subscribe(wf)  # never reads
    fast = await bus.subscribe(wf)
    received: list[Event] = []
    for batch in range(20):
        for i in range(5):
            await asyncio.wait_for(bus.publish(wf, wf_event(batch * 5 + i + 1)), TIMEOUT)
        received += await take(fast, 5)
    assert versions(received) == list(range(1, 101))
    assert slow.overflowed
    with pytest.raises(SubscriberOverflowError) as raised:
        await anext(aiter(slow))
    assert raised.value.code == "slow_consumer"
    assert raised.value.as_dict()["limit"] == 8
    with pytest.raises(SubscriberOverflowError):  # stays failed
        await anext(aiter(slow))
    assert bus.local_subscribers(wf) == 1  # the overflowed one removed itself
    await bus.publish(wf, wf_event(101))
    assert versions(await take(fast, 1)) == [101]
    await fast.close()


async def test_closing_the_bus_ends_subscriptions(kit: Kit) -> None:
    bus = await kit.bus()
    wf = kit.wf()
    sub = await bus.subscribe(wf)
    got: list[Event] = []

    async def read() -> None:
        async for event in sub:
            got.append(event)

    reader = asyncio.create_task(read())
    await bus.publish(wf, wf_event(1))
    # Closed once the event was read (a close drops what is still undelivered; a fixed
    # 50 ms let a slow Redis delivery be dropped).
    await wait_until_async(lambda: got, timeout=TIMEOUT, message="the event never arrived")
    await bus.close()
    await asyncio.wait_for(reader, TIMEOUT)  # the waiting reader's iteration ended
    assert versions(got) == [1]
    with pytest.raises(BusClosedError):
        await bus.publish(wf, wf_event(2))
    with pytest.raises(BusClosedError):
        await bus.subscribe(wf)
    await sub.close()
    await bus.close()  # idempotent


async def test_bad_events_are_refused(kit: Kit) -> None:
    bus = await kit.bus()
    wf = kit.wf()
    with pytest.raises(ValueError):
        await bus.publish(wf, {"type": "workflow", "yaml": "no version"})
    with pytest.raises(ValueError):
        await bus.publish(wf, {"type": "workflow", "version": True})
    with pytest.raises(TypeError):
        await bus.publish(wf, {"type": "status", "when": object()})


async def test_published_events_are_private_copies(kit: Kit) -> None:
    bus = await kit.bus()
    wf = kit.wf()
    sub = await bus.subscribe(wf)
    event = wf_event(1, changes=["a"])
    await bus.publish(wf, event)
    event["changes"].append("mutated later")
    assert (await take(sub, 1))[0]["changes"] == ["a"]
    await sub.close()


# --- Redis specifics ---------------------------------------------------------------


async def test_redis_workers_share_events_and_history(redis_kit: Kit) -> None:
    worker_a = await redis_kit.bus()
    worker_b = await redis_kit.bus()
    wf = redis_kit.wf()
    live_b = await worker_b.subscribe(wf)
    for v in range(1, 4):
        await worker_a.publish(wf, wf_event(v))
    assert versions(await take(live_b, 3)) == [1, 2, 3]
    catch_up_a = await worker_a.subscribe(wf, since_version=1)
    await worker_b.publish(wf, wf_event(4))
    assert versions(await take(catch_up_a, 3)) == [2, 3, 4]
    assert versions(await take(live_b, 1)) == [4]
    await live_b.close()
    await catch_up_a.close()


async def test_redis_uses_one_pubsub_channel_per_workflow(redis_kit: Kit) -> None:
    bus = await redis_kit.bus()
    assert isinstance(bus, RedisBus)
    wf = redis_kit.wf()
    channel = f"{redis_kit.prefix}:wf:{wf}:events"
    subs = [await bus.subscribe(wf) for _ in range(5)]
    probe = await redis_kit.client()
    assert await probe.pubsub_numsub(channel) == [(channel.encode(), 1)]
    await bus.publish(wf, wf_event(1))
    stream = f"{redis_kit.prefix}:wf:{wf}:stream"
    assert await probe.xlen(stream) == 1
    assert 0 < await probe.ttl(stream) <= 7 * 24 * 3600
    for sub in subs:
        assert versions(await take(sub, 1)) == [1]
        await sub.close()

    async def unsubscribed() -> bool:  # UNSUBSCRIBE is sent; let the server apply it
        return bool(await probe.pubsub_numsub(channel) == [(channel.encode(), 0)])

    await wait_until_async(unsubscribed, timeout=5, message=f"{channel} kept a subscriber")


async def test_redis_resubscribing_a_channel_after_leaving_it(redis_kit: Kit) -> None:
    bus = await redis_kit.bus()
    wf = redis_kit.wf()
    for v in range(1, 30):
        sub = await bus.subscribe(wf, since_version=v - 1)
        await bus.publish(wf, wf_event(v))
        assert versions(await take(sub, 1)) == [v]
        await sub.close()


async def test_redis_lost_connection_fails_subscribers_who_can_resubscribe(
    redis_kit: Kit,
) -> None:
    bus = await redis_kit.bus()
    assert isinstance(bus, RedisBus)
    wf = redis_kit.wf()
    sub = await bus.subscribe(wf)
    await bus.publish(wf, wf_event(1))
    assert versions(await take(sub, 1)) == [1]

    admin = await redis_kit.client()
    clients = await admin.client_list(_type="pubsub")
    ours = [c for c in clients if c.get("name") == redis_kit.tag]
    assert len(ours) == 1
    await admin.client_kill_filter(_id=ours[0]["id"])
    await bus.publish(wf, wf_event(2))  # published while the watcher was cut off

    with pytest.raises(BusUnavailableError) as raised:
        await take(sub, 1)
    assert raised.value.code == "bus_unavailable"
    again = await bus.subscribe(wf, since_version=1)
    await bus.publish(wf, wf_event(3))
    assert versions(await take(again, 2)) == [2, 3]
    await again.close()


async def test_redis_subscribe_fails_when_redis_is_unreachable() -> None:
    bus = RedisBus(LazyRedis("redis://127.0.0.1:1/0"), owns_client=True)
    with pytest.raises(Exception):  # noqa: B017 - whatever redis-py raises, not a hang
        await asyncio.wait_for(bus.subscribe("wf"), TIMEOUT)
    await bus.close()


# --- factory ------------------------------------------------------------------------


async def test_make_bus_without_url_is_in_process() -> None:
    bus, lock = make_bus(None)
    assert isinstance(bus, InProcessBus)
    assert isinstance(lock, InProcessLock)
    await bus.close()


async def test_make_bus_with_url_shares_one_lazy_client() -> None:
    bus, lock = make_bus(REDIS_URL, key_prefix="pwtest:factory")
    assert isinstance(bus, RedisBus)
    assert isinstance(lock, RedisLock)
    source = bus._source
    assert isinstance(source, LazyRedis) and not source.built  # nothing built yet
    assert lock.client is bus.client
    wf = Kit.wf()
    sub = await bus.subscribe(wf)
    handle = await lock.acquire(wf)
    assert handle is not None
    await bus.publish(wf, wf_event(1))
    assert versions(await take(sub, 1)) == [1]
    await bus.client.delete(f"pwtest:factory:wf:{wf}:stream", lock.key(wf))
    await bus.close()
    assert not source.built
    await handle.release()  # after the client is gone: logged, not raised, nothing rebuilt
    await lock.close()
    assert not source.built
