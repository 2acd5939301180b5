"""Two uvicorn worker processes sharing Redis and Postgres, driven by real clients.

Worker A and worker B are separate processes: everything that crosses from
one to the other goes through Redis (events, catch-up stream, turn lock) or
Postgres (documents, versions). The model is the fake Messages API, reached
by each worker through the real ``anthropic`` SDK. Every turn here is on the
workflow page, so the planner is the only model called.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer, delay_reply, text_reply, tool_reply
from tests.integration.helpers import (
    DOC,
    Cluster,
    Rest,
    WorkerProcess,
    assert_silent,
    bus_key,
    chat,
    eventually,
    recv,
    recv_until,
    turn,
    watch,
)

pytestmark = pytest.mark.integration

Workers = tuple[WorkerProcess, WorkerProcess]
LOCK_TTL_S = 30.0
HEARTBEAT_S = 1.0


def _of(frames: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [f for f in frames if f["type"] == kind]


async def _assert_history(rest: Rest, workflow_id: str, frames: list[dict[str, Any]]) -> None:
    """The version list is 1..N with no gaps, its head is the current document, and
    each version seen in a frame is stored with exactly that frame's yaml."""
    current = await rest.workflow(workflow_id)
    history = await rest.versions(workflow_id)
    assert [v["version"] for v in history] == list(range(current["version"], 0, -1))
    assert (await rest.version(workflow_id, current["version"]))["yaml"] == current["yaml"]
    for frame in frames:
        assert (await rest.version(workflow_id, frame["version"]))["yaml"] == frame["yaml"]


async def test_a_turn_on_worker_a_streams_each_version_to_a_watcher_on_worker_b(
    cluster: Cluster, workers: Workers, fake_api: FakeAnthropicServer
) -> None:
    a, b = workers
    # Later rounds are slowed down so each frame is checked while the turn still runs.
    fake_api.queue(
        tool_reply(("update_workflow", {"name": "Intake one"})),
        delay_reply(0.3, tool_reply(("update_jobs", {"jobs": [{"key": "check", "name": "V"}]}))),
        delay_reply(0.3, tool_reply(("update_workflow", {"name": "Intake three"}))),
        delay_reply(0.3, text_reply("Renamed the workflow twice and the check step once.")),
    )
    async with Rest(a, cluster) as rest_a, Rest(b, cluster) as rest_b:
        workflow = await rest_a.create_workflow()
        wid = workflow["id"]
        session = await rest_a.create_session(wid)
        async with watch(b, wid) as watcher, chat(a, session["id"]) as ws:
            first = await recv(watcher)
            assert (first["type"], first["version"], first["seq"]) == ("workflow", 1, 1)
            assert first["yaml"] == workflow["yaml"]

            await ws.send(turn("rename the workflow, then the check step, then again"))
            watched: list[dict[str, Any]] = []
            for _ in range(3):
                frame = await recv(watcher)
                watched.append(frame)
                # Persisted before it was published: worker B already has it stored.
                stored = await rest_b.version(wid, frame["version"])
                assert stored["yaml"] == frame["yaml"], frame["version"]
            chat_frames = await recv_until(ws, "turn.completed")
            await assert_silent(watcher, 0.3)

    turn_id = chat_frames[0]["turn_id"]
    assert chat_frames[0]["type"] == "turn.started"
    assert [f["type"] for f in watched] == ["workflow"] * 3
    assert [f["version"] for f in watched] == [2, 3, 4]  # in order, no gaps
    assert [f["seq"] for f in watched] == [2, 3, 4]
    assert all(f["turn_id"] == turn_id and f["workflow_id"] == wid for f in watched)
    assert all(f["changes"] for f in watched)
    assert "name: Intake one" in watched[0]["yaml"]
    assert "name: V\n" in watched[1]["yaml"] and "name: Intake one" in watched[1]["yaml"]
    assert "name: Intake three" in watched[2]["yaml"] and "name: V\n" in watched[2]["yaml"]

    # Worker A's own chat saw the same versions, with the same documents.
    own = _of(chat_frames, "workflow")
    assert [(f["version"], f["yaml"]) for f in own] == [(f["version"], f["yaml"]) for f in watched]
    assert chat_frames[-1]["version"] == 4 and chat_frames[-1]["tool_rounds"] == 3

    async with Rest(b) as rest_b:
        current = await rest_b.workflow(wid)
        assert (current["version"], current["yaml"]) == (4, watched[-1]["yaml"])
        await _assert_history(rest_b, wid, watched)
        history = await rest_b.versions(wid)
    assert [v["tool"] for v in history[:3]] == ["update_workflow", "update_jobs", "update_workflow"]
    assert {v["turn_id"] for v in history[:3]} == {turn_id}
    assert {v["session_id"] for v in history[:3]} == {session["id"]}
    assert len(fake_api.requests) == 4 and not fake_api.errors


async def test_a_second_turn_through_worker_b_waits_in_line_while_worker_a_runs_one(
    cluster: Cluster, workers: Workers, fake_api: FakeAnthropicServer
) -> None:
    a, b = workers
    fake_api.queue(
        delay_reply(1.5, text_reply("A slow answer.")),
        text_reply("The second answer."),
    )
    async with Rest(a, cluster) as rest_a, Rest(b, cluster) as rest_b:
        workflow = await rest_a.create_workflow()
        on_a = await rest_a.create_session(workflow["id"])
        on_b = await rest_b.create_session(workflow["id"])
        async with chat(a, on_a["id"]) as ws_a, chat(b, on_b["id"]) as ws_b:
            await ws_a.send(turn("think about this slowly"))
            await recv_until(ws_a, "turn.started")
            await eventually(lambda: len(fake_api.requests) == 1, what="A's model call")

            await ws_b.send(turn("and answer me at the same time"))
            queued = await recv(ws_b)
            assert (queued["type"], queued["position"]) == ("queued", 1), queued
            assert "turn_id" not in queued  # no turn was started on B yet

            # The connection stays usable while it waits: a bad frame gets its own error.
            await ws_b.send("not json")
            assert (await recv(ws_b))["code"] == "invalid_json"
            first = await recv_until(ws_a, "turn.completed")
            # Once A's turn is over, B's starts by itself: no retry.
            second = await recv_until(ws_b, "turn.completed")

    assert _of(first, "message")[-1]["text"] == "A slow answer."
    assert second[0]["type"] == "turn.started"
    assert _of(second, "message")[-1]["text"] == "The second answer."
    assert queued["seq"] == 1
    assert len(fake_api.requests) == 2
    assert not fake_api.errors


async def test_a_watcher_reconnecting_to_the_other_worker_gets_exactly_what_it_missed(
    cluster: Cluster, workers: Workers
) -> None:
    a, b = workers

    def named(name: str) -> str:
        return DOC.replace("Referral intake", name)

    async with Rest(a, cluster) as rest_a, Rest(b, cluster) as rest_b:
        workflow = await rest_a.create_workflow()
        wid = workflow["id"]
        async with watch(a, wid) as watcher:
            assert (await recv(watcher))["version"] == 1
            put = await rest_a.put(wid, named("Two"), 1)
            seen = await recv(watcher)
            assert (seen["version"], seen["yaml"]) == (2, put["yaml"])
        # Disconnected: versions 3 and 4 happen, on worker A.
        missed = [await rest_a.put(wid, named("Three"), 2), await rest_a.put(wid, named("Four"), 3)]
        async with watch(b, wid, since_version=seen["version"]) as watcher:
            caught_up = [await recv(watcher), await recv(watcher)]
            live_put = await rest_a.put(wid, named("Five"), 4)
            live = await recv(watcher)
            await assert_silent(watcher, 0.5)
        await _assert_history(rest_b, wid, [*caught_up, live])

    assert [(f["version"], f["yaml"]) for f in caught_up] == [
        (m["version"], m["yaml"]) for m in missed
    ]
    # Replayed events (they carry their changes), not a fresh snapshot of the latest.
    assert all(f["changes"] for f in caught_up)
    assert (live["version"], live["yaml"]) == (5, live_put["yaml"])
    assert [f["seq"] for f in [*caught_up, live]] == [1, 2, 3]


async def test_killing_a_worker_mid_turn_leaves_a_committed_version_and_frees_the_lock(
    cluster: Cluster, workers: Workers, fake_api: FakeAnthropicServer
) -> None:
    _, b = workers
    (doomed,) = cluster.start(
        "doomed",
        PLANWRIGHT_TURN_LOCK_HEARTBEAT_S=str(HEARTBEAT_S),
        PLANWRIGHT_TURN_LOCK_TTL_S=str(LOCK_TTL_S),
    )
    fake_api.queue(
        tool_reply(("update_workflow", {"name": "Before the crash"})),
        delay_reply(30, text_reply("never delivered")),
    )
    loop = asyncio.get_running_loop()
    async with Rest(doomed, cluster) as rest_doomed, Rest(b, cluster) as rest_b:
        workflow = await rest_doomed.create_workflow()
        wid = workflow["id"]
        session = await rest_doomed.create_session(wid)
        async with watch(b, wid) as watcher:
            assert (await recv(watcher))["version"] == 1
            async with chat(doomed, session["id"]) as ws:
                await ws.send(turn("rename it, then think for a long time"))
                before_kill = _of(await recv_until(ws, "workflow"), "workflow")
                # The second model call (after the committed mutation) is in flight.
                await eventually(lambda: len(fake_api.requests) == 2, what="the slow call")
                doomed.kill()
                killed_at = loop.time()
            assert not doomed.running

            last = before_kill[-1]
            assert last["version"] == 2 and "name: Before the crash" in last["yaml"]
            current = await rest_b.workflow(wid)
            assert (current["version"], current["yaml"]) == (last["version"], last["yaml"])
            await _assert_history(rest_b, wid, [last])
            assert (await recv(watcher))["version"] == 2
            await assert_silent(watcher, 0.3)

            # The dead worker's lock key outlives it (its TTL is long) ...
            left_ms = cluster.redis.pttl(bus_key(wid, "lock"))
            assert left_ms > (LOCK_TTL_S - 10) * 1000, left_ms
            fake_api.queue(
                tool_reply(("update_jobs", {"jobs": [{"key": "check", "name": "Verify"}]})),
                text_reply("Renamed the check step."),
            )
            fresh = await rest_b.create_session(wid)
            async with chat(b, fresh["id"]) as ws_b:
                # ... but its heartbeat lapses: a turn sent once waits in line, then runs.
                await ws_b.send(turn("rename the check step to Verify"))
                waited = await recv_until(ws_b, "turn.started", timeout_s=left_ms / 1000)
                started_after = loop.time() - killed_at
                after = await recv_until(ws_b, "turn.completed")
            resumed = await recv(watcher)

        assert [f["type"] for f in waited[:-1]] == ["queued"] * (len(waited) - 1), waited
        # Before the lock's TTL could have freed it: the heartbeat did.
        assert started_after < left_ms / 1000, (started_after, left_ms)
        assert [f["version"] for f in _of(after, "workflow")] == [3]
        assert after[-1]["version"] == 3
        assert resumed["version"] == 3 and resumed["yaml"] == _of(after, "workflow")[0]["yaml"]
        assert "name: Before the crash" in resumed["yaml"] and "name: Verify" in resumed["yaml"]
        await _assert_history(rest_b, wid, [last, resumed])
    assert not fake_api.errors
