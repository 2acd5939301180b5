"""A worker killed with SIGKILL mid-turn, and a crowd of turns on one workflow.

The killed worker's turn lock is free as soon as its heartbeat lapses
(``PLANWRIGHT_TURN_LOCK_HEARTBEAT_S``), long before the lock's 30 s TTL: a turn
sent once on the other worker waits in line and starts then, with no retry. Fifty
turns sent at once on one workflow: one runs, ``PLANWRIGHT_TURN_QUEUE_SIZE`` (5)
wait in line with positions 1..5 and run in that order, the rest are ``busy``.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from contextlib import AsyncExitStack
from typing import Any

import pytest

from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    Reply,
    delay_reply,
    text_reply,
    tool_reply,
)
from tests.integration.helpers import (
    Cluster,
    Rest,
    WorkerProcess,
    bus_key,
    chat,
    recv,
    recv_until,
    turn,
)
from tests.waiting import wait_until_async

HEARTBEAT_S = 1.0
LOCK_TTL_S = 30.0
QUEUE = 5
CROWD = 50


def _of(frames: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [f for f in frames if f["type"] == kind]


@pytest.fixture(scope="module")
def survivors(fault_cluster: Cluster) -> tuple[WorkerProcess, WorkerProcess]:
    a, b = fault_cluster.start("a", "b", PLANWRIGHT_TURN_LOCK_HEARTBEAT_S=str(HEARTBEAT_S))
    return a, b


async def test_a_killed_workers_lock_is_free_once_its_heartbeat_lapses_not_its_ttl(
    fault_cluster: Cluster,
    survivors: tuple[WorkerProcess, WorkerProcess],
    fake_api: FakeAnthropicServer,
) -> None:
    _, b = survivors
    (doomed,) = fault_cluster.start(
        "doomed",
        PLANWRIGHT_TURN_LOCK_HEARTBEAT_S=str(HEARTBEAT_S),
        PLANWRIGHT_TURN_LOCK_TTL_S=str(LOCK_TTL_S),
    )
    fake_api.queue(
        tool_reply(("update_workflow", {"name": "Before the crash"})),
        delay_reply(60, text_reply("never delivered")),
    )
    loop = asyncio.get_running_loop()
    async with Rest(doomed, fault_cluster) as rest_doomed, Rest(b, fault_cluster) as rest_b:
        wid = (await rest_doomed.create_workflow())["id"]
        session = await rest_doomed.create_session(wid)
        async with chat(doomed, session["id"]) as ws:
            await ws.send(turn("rename it, then think for a long time"))
            acknowledged = _of(await recv_until(ws, "workflow"), "workflow")[-1]
            await wait_until_async(  # the slow second call is in flight
                lambda: len(fake_api.requests) >= 2,
                timeout=15,
                message="the second model call never came",
            )
            doomed.kill()
            killed_at = loop.time()
        lock = bus_key(wid, "lock")
        left_ms = fault_cluster.redis.pttl(lock)
        assert left_ms > (LOCK_TTL_S - 10) * 1000, left_ms  # the TTL alone would keep it long

        fresh = await rest_b.create_session(wid)
        fake_api.queue(
            tool_reply(("update_jobs", {"jobs": [{"key": "check", "name": "Verify"}]})),
            text_reply("Renamed the check step."),
        )
        async with chat(b, fresh["id"]) as ws_b:
            await ws_b.send(turn("rename the check step to Verify"))  # once: no retries
            # Started before the dead worker's lock could have expired: its heartbeat
            # freed it (a bound of its own, HEARTBEAT_S + 5 s, was a guess a loaded machine
            # could miss).
            waited = await recv_until(ws_b, "turn.started", timeout_s=left_ms / 1000)
            started_after = loop.time() - killed_at
            after = await recv_until(ws_b, "turn.completed")
    assert all(f["type"] == "queued" and f["position"] == 1 for f in waited[:-1]), waited
    assert started_after < left_ms / 1000, (started_after, left_ms)
    assert [f["version"] for f in _of(after, "workflow")] == [3]

    async with Rest(b) as rest:
        current = await rest.workflow(wid)
        history = await rest.versions(wid)
        assert [v["version"] for v in history] == [3, 2, 1]  # no gap, nothing half-written
        assert (await rest.version(wid, 2))["yaml"] == acknowledged["yaml"]
    assert "name: Before the crash" in current["yaml"] and "name: Verify" in current["yaml"]
    assert not fake_api.errors


def _crowd_reply(gate: threading.Event) -> Reply:
    """Each turn renames the workflow after its own number ("turn number 7" → "Order
    7"), then answers; the first model call waits for ``gate``."""

    def reply(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        content = last["content"]
        if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
            return text_reply("Renamed.")
        if not gate.is_set():
            return delay_reply(0.05, reply)
        number = re.search(r"turn number (\d+)", json.dumps(content))
        assert number is not None, content
        return tool_reply(("update_workflow", {"name": f"Order {number.group(1)}"}))

    return reply


async def test_fifty_turns_at_once_one_runs_five_wait_in_order_the_rest_are_busy(
    fault_cluster: Cluster,
    survivors: tuple[WorkerProcess, WorkerProcess],
    fake_api: FakeAnthropicServer,
) -> None:
    gate = threading.Event()
    fake_api.default_reply = _crowd_reply(gate)
    workers = survivors
    async with AsyncExitStack() as stack:
        rest = await stack.enter_async_context(Rest(workers[0], fault_cluster))
        wid = (await rest.create_workflow())["id"]
        sessions = [await rest.create_session(wid) for _ in range(CROWD)]
        sockets = [
            await stack.enter_async_context(chat(workers[i % 2], s["id"]))
            for i, s in enumerate(sessions)
        ]
        await asyncio.gather(
            *(ws.send(turn(f"turn number {i}: rename it")) for i, ws in enumerate(sockets))
        )
        first = await asyncio.gather(*(recv(ws) for ws in sockets))
        started = [i for i, f in enumerate(first) if f["type"] == "turn.started"]
        queued = {i: f["position"] for i, f in enumerate(first) if f["type"] == "queued"}
        busy = [i for i, f in enumerate(first) if f.get("code") == "busy"]
        assert len(started) == 1, first
        assert sorted(queued.values()) == list(range(1, QUEUE + 1)), queued
        assert len(busy) == CROWD - 1 - QUEUE, first
        gate.set()
        running = [*started, *sorted(queued, key=queued.__getitem__)]
        ends = await asyncio.gather(
            *(recv_until(sockets[i], "turn.completed", timeout_s=60) for i in running)
        )
    for frames in ends:
        assert not _of(frames, "error"), frames
    history = await _versions(workers[1], wid)
    # Version 1 is the import; then one rename per turn, in the order they ran.
    assert [v["version"] for v in history] == list(range(len(running) + 1, 0, -1))
    names = []
    async with Rest(workers[1]) as reader:
        for version in range(2, len(running) + 2):
            yaml = (await reader.version(wid, version))["yaml"]
            found = re.search(r"^name: Order (\d+)$", yaml, re.MULTILINE)
            assert found is not None, yaml
            names.append(int(found.group(1)))
    assert names == running, (names, running)
    assert not fake_api.errors


async def _versions(worker: WorkerProcess, wid: str) -> list[dict[str, Any]]:
    async with Rest(worker) as rest:
        return await rest.versions(wid)
