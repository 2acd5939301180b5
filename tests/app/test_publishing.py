"""The publisher: a committed version is reported committed even when the bus is down,
and its event goes out later, in commit order, once the bus takes it."""

from __future__ import annotations

import json
from typing import Any

from agents.runtime import Commit
from app.bus.base import Event
from app.bus.memory import BusUnavailableError, InProcessBus, encode_event
from app.publishing import Publisher
from app.ws.connection import Connection
from tests.waiting import wait_until_async


class FlakyBus(InProcessBus):
    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.published: list[int] = []
        self.refused = 0

    async def publish(self, workflow_id: str, event: Event) -> None:
        if self.down:
            self.refused += 1
            raise BusUnavailableError("Redis is down")
        self.published.append(event["version"])
        await super().publish(workflow_id, event)


class FakeStore:
    def __init__(self) -> None:
        self.version = 1

    async def commit_version(self, workflow_id: str, **kwargs: Any) -> int:
        assert kwargs["expected_version"] == self.version
        self.version += 1
        return self.version


async def commit(publisher: Publisher, version: int) -> int:
    change = Commit(
        yaml=f"name: v{version + 1}\n",
        name=None,
        base_version=version,
        tool="put",
        changes=[],
        summary="s",
    )
    return await publisher.commit_and_publish("wf", change, author="a")


async def test_commits_are_reported_while_the_bus_is_down_and_published_in_order_after() -> None:
    bus = FlakyBus()
    publisher = Publisher(FakeStore(), bus, retry_first_s=0.01, retry_max_s=0.02)  # type: ignore[arg-type]
    sub = await bus.subscribe("wf")
    bus.down = True
    assert await commit(publisher, 1) == 2
    assert await commit(publisher, 2) == 3
    assert publisher.pending == 2 and bus.published == []
    refused = bus.refused
    await wait_until_async(  # retried (not a fixed 50 ms, in which it may not have been)
        lambda: bus.refused >= refused + 2, timeout=5, message="the publisher never retried"
    )
    assert bus.published == [], "nothing goes out while the bus refuses"
    bus.down = False
    assert await commit(publisher, 3) == 4  # queued behind the others: order holds
    await wait_until_async(
        lambda: publisher.pending == 0,
        timeout=5,
        message=lambda: f"{publisher.pending} versions still pending",
    )
    assert bus.published == [2, 3, 4]
    received = [(await sub.__anext__())["version"] for _ in range(3)]
    assert received == [2, 3, 4]
    await publisher.close()
    await bus.close()


class RecordingSocket:
    application_state = None

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send_text(self, text: str) -> None:
        self.sent.append(text)

    async def close(self, code: int, reason: str) -> None:
        pass


async def test_a_bus_event_goes_to_every_socket_as_the_text_it_was_published_as() -> None:
    bus = InProcessBus()
    subs = [await bus.subscribe("wf") for _ in range(3)]
    await bus.publish("wf", {"type": "workflow", "version": 2, "yaml": "name: café\n"})
    sockets = [RecordingSocket() for _ in subs]
    for sub, socket in zip(subs, sockets, strict=True):
        event = await sub.__anext__()
        async with Connection(socket, queue_size=4) as conn:  # type: ignore[arg-type]
            await conn.send(event)
    encoded = encode_event({"type": "workflow", "version": 2, "yaml": "name: café\n"})
    for socket in sockets:
        # Not re-encoded per socket (that would write "é" unescaped): the bus's text.
        assert socket.sent == [encoded[:-1] + ',"seq":1}']
        assert json.loads(socket.sent[0])["yaml"] == "name: café\n"
    await bus.close()
