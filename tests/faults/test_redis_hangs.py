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
from tests.faults.conftest import OwnRedis
from tests.integration.conftest import (
    DOC,
    Cluster,
    Rest,
    WorkerProcess,
    chat,
    recv,
    recv_until,
    turn,
    watch,
)

REDIS_TIMEOUT_S = 0.5
PAUSE_S = 4


def _of(frames: list[dict[str, object]], kind: str) -> list[dict[str, object]]:
    return [f for f in frames if f["type"] == kind]


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
