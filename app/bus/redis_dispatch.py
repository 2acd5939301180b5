"""The per-process pub/sub connection behind :class:`~app.bus.redis.RedisBus`.

Each process keeps one pub/sub connection (the :class:`Dispatcher`) that subscribes
a channel while it has local subscribers and fans messages out to their bounded
buffers. It lives apart from the bus because its subscribe/confirm bookkeeping and
failure handling are a state machine of their own; the bus only adds and removes
subscribers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.asyncio.connection import Connection
from redis.exceptions import ConnectionError as RedisConnectionError

from app.bus.base import EncodedEvent
from app.bus.memory import BusUnavailableError, QueueSubscription
from app.bus.redis_client import as_text

log = logging.getLogger(__name__)


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


class Dispatcher:
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

    def local_subscribers(self, channel: str) -> int:
        """How many of this process's subscribers are on ``channel``."""
        entry = self._channels.get(channel)
        return 0 if entry is None else len(entry.subs)

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
            self._on_confirmed(as_text(message["channel"]))
        elif kind == "message":
            channel = as_text(message["channel"])
            entry = self._channels.get(channel)
            if entry is None:
                return
            try:  # decoded once per process, its text kept for every socket
                event = EncodedEvent(as_text(message["data"]))
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
