"""Redis dies and comes back under two real workers.

The workers use a Redis of their own (a ``redis-server`` process this module
starts on a free loopback port, without persistence), so it can be killed with
SIGKILL and started again empty, exactly what a crashed Redis looks like, without
touching the Redis other tests share. A committed version must be reported as
committed and reach every watcher once Redis is back (from the database when the
new, empty stream lacks it); sockets are told "try again later" (1013), never
"slow client" (4008); the first turn after the outage must work.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from tests.fakes.anthropic_server import FakeAnthropicServer, delay_reply, text_reply, tool_reply
from tests.integration.helpers import (
    DOC,
    Cluster,
    Rest,
    bus_key,
    chat,
    eventually,
    free_port,
    recv,
    recv_until,
    turn,
    watch,
)

TRY_AGAIN_LATER = 1013

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")


class PrivateRedis:
    """A ``redis-server`` on a fixed free port that can be killed and restarted."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        try:
            for _ in range(200):
                try:
                    client.ping()
                    return
                except redis.ConnectionError:
                    time.sleep(0.025)
            raise RuntimeError(f"redis-server on {self.port} did not start")
        finally:
            client.close()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


@pytest.fixture(scope="module")
def private_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture(scope="module")
def outage_cluster(
    database_url: str,
    private_redis: PrivateRedis,
    fake_api: FakeAnthropicServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Cluster]:
    client = redis.Redis.from_url(private_redis.url, socket_connect_timeout=2)
    cluster = Cluster(
        database_url=database_url,
        redis_url=private_redis.url,
        redis_conn=client,
        fake=fake_api,
        log_dir=tmp_path_factory.mktemp("workers"),
    )
    try:
        cluster.start("a", "b")
        yield cluster
    finally:
        if not private_redis.running:
            private_redis.start()
        cluster.close()
        client.close()


@pytest.fixture
def redis_up(private_redis: PrivateRedis) -> Iterator[PrivateRedis]:
    """Each test starts (and leaves things) with Redis running."""
    if not private_redis.running:
        private_redis.start()
    yield private_redis
    if not private_redis.running:
        private_redis.start()


async def closed_with(ws: ClientConnection) -> int:
    """Read until the server closes; the close code it sent."""
    with pytest.raises(ConnectionClosed) as closed:
        for _ in range(50):
            await recv(ws)
    assert closed.value.rcvd is not None, "the server dropped the socket without a close frame"
    return closed.value.rcvd.code


def stream_versions(client: redis.Redis, workflow_id: str) -> list[int]:
    entries = client.xrange(bus_key(workflow_id, "stream"))
    return [json.loads(fields[b"e"])["version"] for _, fields in entries]


async def test_a_put_while_redis_is_down_is_committed_and_reaches_every_watcher(
    outage_cluster: Cluster, redis_up: PrivateRedis
) -> None:
    a, b = outage_cluster.workers
    async with Rest(a, outage_cluster) as rest:
        workflow = await rest.create_workflow()
        wid = workflow["id"]
        async with watch(a, wid) as on_a, watch(b, wid) as on_b:
            assert (await recv(on_a))["version"] == 1
            assert (await recv(on_b))["version"] == 1
            redis_up.kill()
            assert await closed_with(on_a) == TRY_AGAIN_LATER
            assert await closed_with(on_b) == TRY_AGAIN_LATER
        async with watch(b, wid, since_version=1) as during:  # new sockets: a close frame
            assert await closed_with(during) == TRY_AGAIN_LATER
        put = await rest.put(wid, DOC.replace("Referral intake", "During the outage"), 1)
        assert put["version"] == 2, "a committed PUT must be reported as committed"
        assert (await rest.workflow(wid))["version"] == 2
        redis_up.start()  # empty: the stream knows nothing of version 2
        async with (
            watch(b, wid, since_version=1) as back_b,
            watch(a, wid, since_version=1) as back_a,
        ):
            for ws in (back_a, back_b):
                frame = await recv(ws)
                assert frame["type"] == "workflow" and frame["version"] == 2
                assert "During the outage" in frame["yaml"]
            # The worker republishes it once Redis is back; watchers do not get it twice.
            await eventually(
                lambda: stream_versions(outage_cluster.redis, wid) == [2],
                what="version 2 republished on the stream",
            )
            put = await rest.put(wid, DOC.replace("Referral intake", "After"), 2)
            for ws in (back_a, back_b):
                frame = await recv(ws)
                assert frame["version"] == 3, frame


async def test_redis_killed_mid_turn_the_turn_completes_and_the_next_one_works(
    outage_cluster: Cluster, redis_up: PrivateRedis, fake_api: FakeAnthropicServer
) -> None:
    a, b = outage_cluster.workers
    fake_api.queue(
        delay_reply(1.0, tool_reply(("update_workflow", {"name": "Renamed mid-outage"}))),
        text_reply("Renamed it."),
    )
    async with Rest(a, outage_cluster) as rest:
        wid = (await rest.create_workflow())["id"]
        session = await rest.create_session(wid)
        async with chat(a, session["id"]) as ws, watch(b, wid) as watcher:
            assert (await recv(watcher))["version"] == 1
            await ws.send(turn("rename the workflow"))
            started = await recv(ws)
            assert started["type"] == "turn.started", started
            redis_up.kill()  # while the model is thinking
            assert await closed_with(watcher) == TRY_AGAIN_LATER
            frames = await recv_until(ws, "turn.completed")
            errors = [f for f in frames if f["type"] == "error"]
            assert not errors, errors
            assert [f["version"] for f in frames if f["type"] == "workflow"] == [2]
            assert (await rest.workflow(wid))["name"] == "Renamed mid-outage"
            redis_up.start()
            # The chat socket stayed open; changes made elsewhere reach it again.
            await rest_put_until_relayed(rest, ws, wid)
            # The first turn after the outage works (no stale Redis connection).
            fake_api.queue(
                tool_reply(("update_workflow", {"name": "After the outage"})),
                text_reply("Renamed it again."),
            )
            await ws.send(turn("rename it again"))
            frames = await recv_until(ws, "turn.completed")
            assert not [f for f in frames if f["type"] == "error"], frames
        latest = (await rest.workflow(wid))["version"]
        async with watch(b, wid, since_version=2) as back:
            seen = [(await recv(back))["version"]]
            while seen[-1] < latest:
                seen.append((await recv(back))["version"])
            # Every version the stream holds, or the database's document where it has
            # a gap: either way the watcher ends at the latest, never going back.
            assert seen == sorted(set(seen)) and seen[-1] == latest, seen
    assert not fake_api.errors


async def rest_put_until_relayed(rest: Rest, ws: ClientConnection, wid: str) -> dict[str, Any]:
    """A PUT on worker B reaches the chat socket on worker A (through the bus, or the
    database when the relay resubscribes after it)."""
    assert rest.cluster is not None
    async with Rest(rest.cluster.workers[1]) as other:
        current = await other.workflow(wid)
        put = await other.put(wid, DOC.replace("Referral intake", "Put from B"), current["version"])
    frames = await recv_until(ws, "workflow")
    assert frames[-1]["version"] >= put["version"], frames
    return frames[-1]
