"""A hung Redis (``DEBUG SLEEP``) under a real worker: every wait on it is bounded.

A turn sent while Redis hangs is answered within the Redis timeout with an
``error`` frame (``lock_unavailable``), never left silent; the chat socket stays
open and runs the next turn once Redis answers again. A PUT while it hangs is
committed and answered at once (published when Redis is back).
"""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer, text_reply, tool_reply
from tests.faults.helpers import OwnRedis
from tests.integration.helpers import (
    DOC,
    Cluster,
    Rest,
    WorkerProcess,
    bus_key,
    chat,
    recv,
    recv_until,
    turn,
    watch,
)
from tests.waiting import wait_until_async

REDIS_TIMEOUT_S = 0.5
PAUSE_S = 4


def _of(frames: list[dict[str, object]], kind: str) -> list[dict[str, object]]:
    return [f for f in frames if f["type"] == kind]


async def _subscribed(cluster: Cluster, workflow_id: str, timeout_s: float = 10) -> None:
    """Wait until the worker listens on the workflow's channel (a watch socket subscribes
    after its handshake; a chat socket before it, so for one this holds at once)."""
    channel = bus_key(workflow_id, "events")
    await wait_until_async(
        lambda: cluster.redis.pubsub_numsub(channel)[0][1] >= 1,
        timeout=timeout_s,
        message="the socket never subscribed",
    )


@pytest.fixture(scope="module")
def worker(fault_cluster: Cluster) -> WorkerProcess:
    (worker,) = fault_cluster.start("hung", PLANWRIGHT_REDIS_TIMEOUT_S=str(REDIS_TIMEOUT_S))
    return worker


async def test_a_turn_while_redis_hangs_gets_an_error_frame_and_the_socket_stays_open(
    fault_cluster: Cluster,
    worker: WorkerProcess,
    own_redis: OwnRedis,
    fake_api: FakeAnthropicServer,
) -> None:
    loop = asyncio.get_running_loop()
    async with Rest(worker, fault_cluster) as rest:
        workflow = await rest.create_workflow()
        session = await rest.create_session(workflow["id"])
        async with chat(worker, session["id"]) as ws:
            await _subscribed(fault_cluster, workflow["id"])  # the socket is live first
            with own_redis.paused(PAUSE_S):
                sent = loop.time()
                await ws.send(turn("rename the workflow to Hung"))
                answer = await recv(ws, timeout_s=PAUSE_S - 1)
                waited = loop.time() - sent
            assert (answer["type"], answer["code"]) == ("error", "lock_unavailable"), answer
            assert "turn_id" not in answer  # no turn began: nothing was recorded or changed
            assert waited < 4 * REDIS_TIMEOUT_S, waited

            # Redis answers again: the same socket runs the next turn.
            fake_api.queue(
                tool_reply(("update_workflow", {"name": "After the pause"})),
                text_reply("Renamed it."),
            )
            await ws.send(turn("rename the workflow to After the pause"))
            frames = await recv_until(ws, "turn.completed")
        assert frames[0]["type"] == "turn.started", frames
        assert [f["version"] for f in _of(frames, "workflow")] == [2]
        assert (await rest.workflow(workflow["id"]))["name"] == "After the pause"
    assert len(fake_api.requests) == 2  # the turn sent during the pause never reached the model
    assert not fake_api.errors


async def test_a_put_while_redis_hangs_is_committed_at_once_and_reaches_the_watcher_after(
    fault_cluster: Cluster, worker: WorkerProcess, own_redis: OwnRedis
) -> None:
    loop = asyncio.get_running_loop()
    async with Rest(worker, fault_cluster) as rest:
        workflow = await rest.create_workflow()
        wid = workflow["id"]
        async with watch(worker, wid) as watcher:
            assert (await recv(watcher))["version"] == 1
            await _subscribed(fault_cluster, wid)
            with own_redis.paused(PAUSE_S):
                sent = loop.time()
                put = await rest.put(wid, DOC.replace("Referral intake", "Put while hung"), 1)
                waited = loop.time() - sent
                assert put["version"] == 2
                assert waited < 4 * REDIS_TIMEOUT_S, waited
            # Once Redis is back the version goes out (published late, or from the
            # database when the watcher resubscribes).
            frames = await recv_until(watcher, "workflow", timeout_s=15)
        assert frames[-1]["version"] == 2 and "Put while hung" in frames[-1]["yaml"]


async def test_a_chat_opened_while_redis_is_down_stays_open_and_catches_up(
    fault_cluster: Cluster,
    worker: WorkerProcess,
    own_redis: OwnRedis,
    fake_api: FakeAnthropicServer,
) -> None:
    async with Rest(worker, fault_cluster) as rest:
        workflow = await rest.create_workflow()
        wid = workflow["id"]
        session = await rest.create_session(wid)
        own_redis.kill()
        try:
            async with chat(worker, session["id"]) as ws:
                told = await recv(ws)
                assert (told["type"], told["code"]) == ("error", "bus_unavailable"), told
                put = await rest.put(wid, DOC.replace("Referral intake", "While Redis was down"), 1)
                own_redis.start()  # empty: what the socket missed comes from the database
                frames = await recv_until(ws, "workflow", timeout_s=20)
                assert (frames[-1]["version"], frames[-1]["yaml"]) == (2, put["yaml"])
                fake_api.queue(text_reply("Hello again."))
                await ws.send(turn("hello"))
                done = await recv_until(ws, "turn.completed")
        finally:
            if not own_redis.running:
                own_redis.start()
    assert [f["text"] for f in _of(done, "message")] == ["Hello again."]
