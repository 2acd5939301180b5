"""A reply that offers plan mode in a workflow session (issue 23's routing), in the
terminal client against a fake server on loopback: the client says that /plan sends the
message again as a plan, and /plan alone then does exactly that (``mode: plan``, the
same words); an offer is spent by the next turn."""

from __future__ import annotations

import asyncio
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
from tests.client import frames
from tests.client.frames import CONTRACTS, PLAN

SPEC = "## Intake - fetch the referral ## Status report - post the summary"
OFFER = "This describes 2 separate processes. Nothing was changed."


class OfferingServer:
    """Offers plan mode for a turn without a mode; proposes a plan for a plan turn."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    async def handler(self, ws: ServerConnection) -> None:
        async for raw in ws:
            frame = json.loads(raw)
            self.received.append(frame)
            if frame["type"] == "turn" and frame.get("mode") != "plan":
                await self.send(ws, {"type": "turn.started", "turn_id": "t1"})
                offer = {"offer": "plan"} if frame["content"] == SPEC else {}
                text = OFFER if offer else "Nothing to change."
                await self.send(ws, {"type": "message", "turn_id": "t1", "text": text, **offer})
                await self.send(ws, {"type": "turn.completed", "turn_id": "t1", "version": 3})
            elif frame["type"] == "turn":
                await self.send(ws, {"type": "turn.started", "turn_id": "t2"})
                await self.send(
                    ws,
                    {
                        "type": "plan.proposed",
                        "turn_id": "t2",
                        "request_id": "r1",
                        "question": "Build these 2 workflows?",
                        "plan": PLAN,
                        "contracts": CONTRACTS,
                        "delta": None,
                        "revision": 1,
                    },
                )
            elif frame["type"] == "confirm":
                await self.send(ws, {"type": "message", "turn_id": "t2", "text": "Rejected."})
                await self.send(ws, {"type": "turn.completed", "turn_id": "t2", "version": 3})

    async def send(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        await ws.send(json.dumps(frame))


@pytest.fixture
async def fake() -> AsyncIterator[tuple[OfferingServer, Server]]:
    server = OfferingServer()
    async with serve(server.handler, "127.0.0.1", 0) as running:
        yield server, running


def _rest() -> Rest:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/workflows/w1":
            return httpx.Response(200, json={"id": "w1", "version": 3, "yaml": frames.DOC})
        return httpx.Response(404, json={"error": {"code": "not_found", "message": "no"}})

    return Rest(httpx.AsyncClient(base_url="http://test", transport=httpx.MockTransport(answer)))


async def _run(running: Server, script: str) -> tuple[int, str]:
    port = running.sockets[0].getsockname()[1]
    stdout = io.StringIO()
    lines = LineReader(io.StringIO(script), asyncio.get_running_loop())
    client = ChatClient(
        rest=_rest(),
        out=Output(stdout),
        lines=lines,
        ws_url=f"ws://127.0.0.1:{port}/v1/sessions/s1/ws",
        session_id="s1",
        workflow_id="w1",
        read_only=False,
        name="Referral intake",
        version=3,
        yaml=frames.DOC,
    )
    try:
        code = await asyncio.wait_for(client.run(), 20)
    finally:
        lines.close()
    return code, stdout.getvalue()


async def test_plan_alone_sends_the_offered_message_as_a_plan(
    fake: tuple[OfferingServer, Server],
) -> None:
    server, running = fake
    code, transcript = await _run(running, f"{SPEC}\n/plan\nr\n/quit\n")
    assert code == 0, transcript
    assert f"planner> {OFFER}" in transcript
    assert "/plan sends that message again as a plan." in transcript
    offered, planned, answer = server.received
    assert offered["content"] == SPEC and "mode" not in offered
    assert planned["content"] == SPEC and planned["mode"] == "plan"
    assert answer == {"type": "confirm", "request_id": "r1", "approved": False}
    assert "Proposed plan, revision 1: 2 workflows" in transcript


async def test_an_offer_is_spent_by_the_next_turn(fake: tuple[OfferingServer, Server]) -> None:
    server, running = fake
    code, transcript = await _run(running, f"{SPEC}\nhello\n/plan\n## Other\n.\nr\n/quit\n")
    assert code == 0, transcript
    assert transcript.count("/plan sends that message again as a plan.") == 1
    # After a turn with no offer, /plan alone reads a pasted spec as before.
    assert [(f.get("content"), f.get("mode")) for f in server.received[:3]] == [
        (SPEC, None),
        ("hello", None),
        ("## Other", "plan"),
    ]
