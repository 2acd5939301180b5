"""The service's Postgres connections terminated, new ones refused, then allowed again.

While the database is out of reach a REST PUT gets a JSON 503
(``service_unavailable``) and a chat turn an ``error`` frame on a socket that stays
open. Once it is back, every pool (the store's and the checkpointer's) reconnects by
itself: the first turn after the outage works, and the version history has no gap
and no half-written version.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer, delay_reply, text_reply, tool_reply
from tests.faults.helpers import SERVICE_DB, OwnPostgres
from tests.integration.helpers import (
    DOC,
    Cluster,
    Rest,
    WorkerProcess,
    chat,
    recv,
    recv_until,
    turn,
)

DB_TIMEOUT_S = 1.0


def _of(frames: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [f for f in frames if f["type"] == kind]


async def recv_until_end(ws: Any, timeout_s: float = 15.0) -> list[dict[str, Any]]:
    """Frames up to the turn's end: ``turn.completed`` or an ``error``."""
    frames: list[dict[str, Any]] = []
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        left = deadline - asyncio.get_running_loop().time()
        assert left > 0, f"the turn did not end within {timeout_s} s: {frames}"
        frames.append(await recv(ws, left))
        if frames[-1]["type"] in ("turn.completed", "error"):
            return frames


async def _history_is_whole(rest: Rest, workflow_id: str) -> dict[str, Any]:
    current = await rest.workflow(workflow_id)
    history = await rest.versions(workflow_id)
    assert [v["version"] for v in history] == list(range(current["version"], 0, -1))
    for entry in history:
        stored = await rest.version(workflow_id, entry["version"])
        assert stored["yaml"].startswith(("id:", "name:", "#")) or "jobs" in stored["yaml"]
    return current


@pytest.fixture(scope="module")
def worker(fault_cluster: Cluster) -> WorkerProcess:
    (worker,) = fault_cluster.start("pg", PLANWRIGHT_DB_TIMEOUT_S=str(DB_TIMEOUT_S))
    return worker


@pytest.fixture
def outage(own_postgres: OwnPostgres) -> Any:
    """Cut the service's database off; allowed again at the end whatever happens."""
    try:
        yield own_postgres
    finally:
        own_postgres.allow(SERVICE_DB)


async def test_between_turns_rest_gets_503_a_turn_gets_an_error_and_the_next_turn_works(
    fault_cluster: Cluster,
    worker: WorkerProcess,
    outage: OwnPostgres,
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.queue(
        tool_reply(("update_workflow", {"name": "Before the outage"})), text_reply("Renamed.")
    )
    async with Rest(worker, fault_cluster) as rest:
        wid = (await rest.create_workflow())["id"]
        session = await rest.create_session(wid)
        async with chat(worker, session["id"]) as ws:
            await ws.send(turn("rename it to Before the outage"))
            first = await recv_until(ws, "turn.completed")
            assert first[-1]["version"] == 2

            assert outage.cut_off(SERVICE_DB) >= 1  # the pools held connections: all gone
            response = await rest.http.put(
                f"/v1/workflows/{wid}",
                json={"yaml": DOC.replace("Referral intake", "During"), "expected_version": 2},
            )
            assert response.status_code == 503, response.text
            assert response.json()["error"]["code"] == "service_unavailable"

            await ws.send(turn("rename it to During"))
            during = await recv_until_end(ws)
            assert (during[-1]["type"], during[-1]["code"]) == ("error", "service_unavailable")

            outage.allow(SERVICE_DB)
            fake_api.queue(
                tool_reply(("update_workflow", {"name": "After the outage"})),
                text_reply("Renamed again."),
            )
            await ws.send(turn("rename it to After the outage"))
            after = await recv_until(ws, "turn.completed")
        assert not _of(after, "error"), after
        assert [f["version"] for f in _of(after, "workflow")] == [3]
        current = await _history_is_whole(rest, wid)
        assert (current["version"], current["name"]) == (3, "After the outage")
        put = await rest.put(wid, DOC.replace("Referral intake", "Put after"), 3)
        assert put["version"] == 4
    assert not fake_api.errors


async def test_cut_off_mid_turn_the_turn_is_answered_and_the_first_turn_after_works(
    fault_cluster: Cluster,
    worker: WorkerProcess,
    outage: OwnPostgres,
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.queue(
        tool_reply(("update_workflow", {"name": "Committed before the cut"})),
        delay_reply(1.0, text_reply("Renamed, slowly.")),
    )
    async with Rest(worker, fault_cluster) as rest:
        wid = (await rest.create_workflow())["id"]
        session = await rest.create_session(wid)
        async with chat(worker, session["id"]) as ws:
            await ws.send(turn("rename it, then think"))
            committed = _of(await recv_until(ws, "workflow"), "workflow")
            assert committed[-1]["version"] == 2
            outage.cut_off(SERVICE_DB)  # while the second model call is in flight
            ended = await recv_until_end(ws)
            outage.allow(SERVICE_DB)
            # Answered either way: completed, or an error naming the outage.
            if ended[-1]["type"] == "error":
                assert ended[-1]["code"] == "service_unavailable", ended

            fake_api.queue(
                tool_reply(("update_workflow", {"name": "First after the cut"})),
                text_reply("Renamed again."),
            )
            await ws.send(turn("rename it to First after the cut"))
            after = await recv_until(ws, "turn.completed")
        assert not _of(after, "error"), after
        assert [f["version"] for f in _of(after, "workflow")] == [3]
        current = await _history_is_whole(rest, wid)
        assert (current["version"], current["name"]) == (3, "First after the cut")
        assert (await rest.version(wid, 2))["yaml"] == committed[-1]["yaml"]
    assert not fake_api.errors


async def test_a_chat_socket_opened_during_the_outage_is_told_why_it_closes(
    fault_cluster: Cluster, worker: WorkerProcess, outage: OwnPostgres
) -> None:
    async with Rest(worker, fault_cluster) as rest:
        wid = (await rest.create_workflow())["id"]
        session = await rest.create_session(wid)
        outage.cut_off(SERVICE_DB)
        async with chat(worker, session["id"]) as ws:
            frame = await recv(ws)
            assert (frame["type"], frame["code"]) == ("error", "service_unavailable"), frame
            await ws.wait_closed()
            assert ws.close_code == 1013
