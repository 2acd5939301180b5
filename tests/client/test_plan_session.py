"""A project session in the terminal client against a fake server on loopback: a
WebSocket that plays the plan-mode protocol (DESIGN §5a) and REST answers from an
httpx mock. The client proposes with /plan, adjusts, approves, and shows progress;
a plan pending when the session opens is shown and answered first."""

from __future__ import annotations

import asyncio
import copy
import io
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.server import Server, ServerConnection, serve

from app.client.rest import Rest
from app.client.session import ChatClient
from app.client.terminal import LineReader, Output
from tests.client.frames import CONTRACTS, PLAN

PROJECT: dict[str, Any] = {"id": "p1", "name": "Referrals", "workflows": [], "plan": None}


class FakeServer:
    """Answers turns with a plan, feedback with a revision, approval with a build."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.revision = 0

    async def handler(self, ws: ServerConnection) -> None:
        async for raw in ws:
            frame = json.loads(raw)
            self.received.append(frame)
            if frame["type"] == "turn":
                await self.send(ws, {"type": "turn.started", "turn_id": "t1"})
                await self.propose(ws)
            elif frame["type"] == "confirm" and frame.get("feedback"):
                await self.propose(ws)
            elif frame["type"] == "confirm":
                if frame["approved"]:
                    await self.build(ws)
                text = "Built 2 workflows." if frame["approved"] else "Rejected."
                await self.send(ws, {"type": "message", "turn_id": "t1", "text": text})
                await self.send(ws, {"type": "turn.completed", "turn_id": "t1", "version": 0})

    async def send(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        await ws.send(json.dumps(frame))

    async def propose(self, ws: ServerConnection) -> None:
        self.revision += 1
        revised = copy.deepcopy(PLAN)
        if self.revision > 1:
            revised["summary"] = "Revised after feedback."
        await self.send(
            ws,
            {
                "type": "plan.proposed",
                "turn_id": "t1",
                "request_id": f"r{self.revision}",
                "question": "Build these 2 workflows?",
                "plan": revised,
                "contracts": CONTRACTS,
                "delta": None,
                "revision": self.revision,
            },
        )

    async def build(self, ws: ServerConnection) -> None:
        for number, key in enumerate(PLAN["order"], 1):
            progress = {"type": "plan.progress", "turn_id": "t1", "workflow_key": key}
            await self.send(ws, {**progress, "workflow_id": None, "status": "building"})
            await self.send(
                ws,
                {
                    "type": "workflow",
                    "turn_id": "t1",
                    "workflow_id": f"w{number}",
                    "version": 2,
                    "yaml": "name: Other\n",
                    "changes": [],
                },
            )
            await self.send(ws, {**progress, "workflow_id": f"w{number}", "status": "built"})


@pytest.fixture
async def fake() -> AsyncIterator[tuple[FakeServer, Server]]:
    server = FakeServer()
    async with serve(server.handler, "127.0.0.1", 0) as running:
        yield server, running


def rest() -> Rest:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/projects/p1"
        return httpx.Response(200, json=PROJECT)

    return Rest(httpx.AsyncClient(base_url="http://test", transport=httpx.MockTransport(answer)))


async def run_client(
    running: Server, script: str, pending: dict[str, Any] | None = None, mode: str | None = None
) -> tuple[int, str]:
    port = running.sockets[0].getsockname()[1]
    stdout = io.StringIO()
    lines = LineReader(io.StringIO(script), asyncio.get_running_loop())
    client = ChatClient(
        rest=rest(),
        out=Output(stdout),
        lines=lines,
        ws_url=f"ws://127.0.0.1:{port}/v1/sessions/s1/ws",
        session_id="s1",
        workflow_id=None,
        read_only=False,
        name="Referrals",
        version=0,
        yaml="",
        project_id="p1",
        pending=pending,
        mode=mode,
    )
    try:
        code = await asyncio.wait_for(client.run(), 20)
    finally:
        lines.close()
    return code, stdout.getvalue()


async def test_plan_adjust_then_approve_builds_with_progress(
    fake: tuple[FakeServer, Server],
) -> None:
    server, running = fake
    script = "/plan\n# Referrals\n## 1. Intake\n.\nd\nfewer steps\na\n/yaml\n/quit\n"
    code, transcript = await run_client(running, script)
    assert code == 0, transcript
    assert transcript.startswith("Project 'Referrals' · planning session\n")
    assert "No plan yet" in transcript
    turn, adjust, approve = server.received
    assert turn["mode"] == "plan" and turn["content"] == "# Referrals\n## 1. Intake"
    assert adjust == {
        "type": "confirm",
        "request_id": "r1",
        "approved": False,
        "feedback": "fewer steps",
    }
    assert approve == {"type": "confirm", "request_id": "r2", "approved": True}
    assert "Proposed plan, revision 1: 2 workflows" in transcript
    assert "Revised after feedback." in transcript.split("revision 2", 1)[1]
    assert "Feedback sent: revising the plan…" in transcript
    built = transcript.split("Approved: building the workflows…", 1)[1]
    assert "  … Building Referral intake…\n  ✓ Built Referral intake (w1)\n" in built
    assert "  ✓ Built Coverage check (w2)\n" in built
    assert "planner> Built 2 workflows." in built
    assert "changed elsewhere" not in built  # other workflows' frames are not this session's
    assert "/yaml works on one workflow; this is a project session." in transcript


async def test_a_plan_pending_when_the_session_opens_is_shown_and_rejected(
    fake: tuple[FakeServer, Server],
) -> None:
    server, running = fake
    server.revision = 1  # the server proposed r1 before this client opened the session
    pending = {
        "turn_id": "t1",
        "request_id": "r1",
        "question": "Build these 2 workflows?",
        "plan": {"plan": PLAN, "contracts": CONTRACTS, "delta": None, "revision": 1},
    }
    code, transcript = await run_client(running, "r\n", pending)
    assert code == 0, transcript
    assert "A plan is waiting for review:" in transcript
    assert "Proposed plan, revision 1: 2 workflows" in transcript
    assert server.received == [{"type": "confirm", "request_id": "r1", "approved": False}]
    assert "Rejected: nothing is built." in transcript
    assert "planner> Rejected." in transcript


async def test_busy_names_the_project_on_a_project_session() -> None:
    stdout = io.StringIO()
    lines = LineReader(io.StringIO(""), asyncio.get_running_loop())
    try:
        client = ChatClient(
            rest=rest(),
            out=Output(stdout),
            lines=lines,
            ws_url="ws://127.0.0.1:9/unused",
            session_id="s1",
            workflow_id=None,
            read_only=False,
            name="Referrals",
            version=0,
            yaml="",
            project_id="p1",
        )
        client.handle({"type": "error", "code": "busy", "message": "busy"})
    finally:
        lines.close()
    assert stdout.getvalue() == (
        "! busy: another turn is running on this project; try again when it finishes\n"
    )
    assert client.turn_events.get_nowait()[0] == "error"


async def test_with_mode_plan_every_line_is_a_plan_turn(fake: tuple[FakeServer, Server]) -> None:
    server, running = fake
    code, transcript = await run_client(running, "two processes, please\nr\n", mode="plan")
    assert code == 0, transcript
    turn, reject = server.received
    assert turn["mode"] == "plan" and turn["content"] == "two processes, please"
    assert reject == {"type": "confirm", "request_id": "r1", "approved": False}


async def test_a_queued_turn_says_its_place_in_line_and_keeps_waiting() -> None:
    stdout = io.StringIO()
    lines = LineReader(io.StringIO(""), asyncio.get_running_loop())
    try:
        client = ChatClient(
            rest=rest(),
            out=Output(stdout),
            lines=lines,
            ws_url="ws://127.0.0.1:9/unused",
            session_id="s1",
            workflow_id="w1",
            read_only=False,
            name="Referrals",
            version=1,
            yaml="",
        )
        client.handle({"type": "queued", "position": 2})
    finally:
        lines.close()
    assert stdout.getvalue() == (
        "  queued: another turn runs on this workflow; you are 2 in line\n"
    )
    assert client.turn_events.empty()  # the turn is still coming
