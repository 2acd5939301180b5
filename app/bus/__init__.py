"""The event bus and turn lock: Redis when ``REDIS_URL`` is set, in-process otherwise."""

from __future__ import annotations

from app.bus.base import Event, EventBus, LockHandle, Subscription, TurnLock
from app.bus.memory import (
    DEFAULT_QUEUE_SIZE,
    DEFAULT_RETENTION,
    BusClosedError,
    BusUnavailableError,
    InProcessBus,
    InProcessLock,
    QueueSubscription,
    SubscriberOverflowError,
)
from app.bus.redis import LazyRedis, RedisBus, RedisLock
from app.bus.redis_client import DEFAULT_TIMEOUT_S
from app.bus.redis_lock import DEFAULT_HEARTBEAT_S

__all__ = [
    "BusClosedError",
    "BusUnavailableError",
    "Event",
    "EventBus",
    "InProcessBus",
    "InProcessLock",
    "LazyRedis",
    "LockHandle",
    "QueueSubscription",
    "RedisBus",
    "RedisLock",
    "SubscriberOverflowError",
    "Subscription",
    "TurnLock",
    "make_bus",
]


def make_bus(
    redis_url: str | None,
    *,
    key_prefix: str = "planwright",
    retention: int = DEFAULT_RETENTION,
    queue_size: int = DEFAULT_QUEUE_SIZE,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    heartbeat_s: float = DEFAULT_HEARTBEAT_S,
) -> tuple[EventBus, TurnLock]:
    """The bus and lock for this process. With a URL both share one Redis client, built
    on first use and closed by ``bus.close()`` (close the lock first: ``lock.close()``).
    ``timeout_s`` bounds each wait on Redis; ``heartbeat_s`` is how soon a dead lock
    holder's workflow is free again."""
    if redis_url is None:
        return InProcessBus(retention=retention, queue_size=queue_size), InProcessLock()
    client = LazyRedis(redis_url, timeout_s=timeout_s)
    bus = RedisBus(
        client,
        key_prefix=key_prefix,
        retention=retention,
        queue_size=queue_size,
        # Confirming a subscription is one round trip, with some slack for a busy Redis.
        subscribe_timeout_s=4 * timeout_s,
        owns_client=True,
    )
    return bus, RedisLock(client, key_prefix=key_prefix, heartbeat_s=heartbeat_s)
