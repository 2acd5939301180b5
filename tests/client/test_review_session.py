"""Review mode, test runs and fixing in the terminal client against a fake server on
loopback: a WebSocket that plays the review and run protocol (api.md, DESIGN §5c) with
the recorded frames of ``tests.client.frames``, and REST answers from an httpx mock."""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.server import Server, ServerConnection, serve

from app.client import review, runs
from app.client.rest import Rest
from app.client.session import ChatClient
from app.client.terminal import LineReader, Output
from tests.client import frames
from tests.waiting import wait_until_async

ACCEPTED_DOC = frames.DOC.replace("name: Check coverage", "name: Check eligibility")


class FakeServer:
    """Turns end with a proposal; answers follow ``review_errors`` (one error code per
    answer, ``None``: apply); ``run`` frames get progress and the run in ``run_result``."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.review_errors: list[str | None] = []
        self.run_result: dict[str, Any] = frames.failed_run()
        self.drop_after_turn = False
        self.connections = 0

    async def handler(self, ws: ServerConnection) -> None:
        self.connections += 1
        async for raw in ws:
            frame = json.loads(raw)
            self.received.append(frame)
            if frame["type"] == "turn":
                await self.send(ws, {"type": "turn.started", "turn_id": "t1"})
                if self.drop_after_turn:
                    self.drop_after_turn = False
                    await ws.close(1012)  # a restart: the turn's proposal waits at the server
                    return
                if frame.get("errors"):
                    await self.send(ws, {"type": "message", "turn_id": "t1", "text": "Fixed."})
                    await self.send(ws, self.completed(3))
                    continue
                # As the service does: the reply streams, then the proposal repeats it.
                said = "Removed Check coverage; added Dedupe."
                await self.send(ws, {"type": "message.delta", "turn_id": "t1", "text": said})
                question = f"{said}\n\n{frames.proposal()['question']}"
                await self.send(ws, frames.proposal(question=question))
            elif frame["type"] == "review":
                code = self.review_errors.pop(0) if self.review_errors else None
                if code is not None:
                    await self.send(ws, {"type": "error", "code": code, "message": f"{code}!"})
                    continue
                if frame["accepted"]:
                    await self.send(
                        ws,
                        {
                            "type": "workflow",
                            "turn_id": "t1",
                            "workflow_id": "w1",
                            "version": 4,
                            "yaml": ACCEPTED_DOC,
                            "changes": [{"action": "updated", "kind": "job", "key": "check"}],
                        },
                    )
                text = f"Applied {', '.join(frame['accepted'])}." if frame["accepted"] else "No."
                await self.send(ws, {"type": "message", "turn_id": "t1", "text": text})
                await self.send(ws, self.completed(4 if frame["accepted"] else 3))
            elif frame["type"] == "run":
                for key, status in (("fetch", "started"), ("fetch", "succeeded")):
                    await self.send(ws, frames.progress(key, status))
                await self.send(ws, frames.progress("check", "started"))
                await self.send(ws, frames.progress("check", self.run_result["status"]))
                await self.send(ws, frames.completed(self.run_result))

    def completed(self, version: int) -> dict[str, Any]:
        usage = {"input_tokens": 0, "output_tokens": 0, "calls": []}
        return {
            "type": "turn.completed",
            "turn_id": "t1",
            "version": version,
            "tool_rounds": 1,
            "usage": usage,
            "duration_ms": 5,
        }

    async def send(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        await ws.send(json.dumps(frame))


@pytest.fixture
async def fake() -> AsyncIterator[tuple[FakeServer, Server]]:
    server = FakeServer()
    async with serve(server.handler, "127.0.0.1", 0) as running:
        yield server, running


class FakeRest:
    """The REST side: the session (with its open proposal, if any) and the runs."""

    def __init__(self) -> None:
        self.pending: dict[str, Any] | None = None
        self.runs: list[dict[str, Any]] = []
        self.calls: list[str] = []

    def answer(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(f"{request.method} {request.url.path}")
        if request.url.path == "/v1/sessions/s1":
            return httpx.Response(200, json={"id": "s1", "pending_confirmation": self.pending})
        if request.url.path == "/v1/workflows/w1/runs":
            return httpx.Response(200, json={"runs": self.runs})
        if request.url.path == "/v1/workflows/w1":
            return httpx.Response(200, json={"id": "w1", "version": 3, "yaml": frames.DOC})
        return httpx.Response(404, json={"error": {"code": "not_found", "message": "no"}})

    def rest(self) -> Rest:
        transport = httpx.MockTransport(self.answer)
        return Rest(httpx.AsyncClient(base_url="http://test", transport=transport))


async def run_client(
    running: Server,
    script: str,
    *,
    rest: FakeRest | None = None,
    pending: dict[str, Any] | None = None,
    review_mode: bool = True,
    read_only: bool = False,
) -> tuple[int, str]:
    port = running.sockets[0].getsockname()[1]
    stdout = io.StringIO()
    lines = LineReader(io.StringIO(script), asyncio.get_running_loop())
    client = ChatClient(
        rest=(rest or FakeRest()).rest(),
        out=Output(stdout),
        lines=lines,
        ws_url=f"ws://127.0.0.1:{port}/v1/sessions/s1/ws",
        session_id="s1",
        workflow_id="w1",
        read_only=read_only,
        name="Referral intake",
        version=3,
        yaml=frames.DOC,
        pending=pending,
        review=review_mode,
    )
    try:
        code = await asyncio.wait_for(client.run(), 20)
    finally:
        lines.close()
    return code, stdout.getvalue()


def between(transcript: str, start: str, end: str = "you> ") -> str:
    assert start in transcript, transcript
    return transcript.split(start, 1)[1].split(end, 1)[0]


async def test_a_review_mode_turn_shows_the_proposal_and_applies_the_chosen_changes(
    fake: tuple[FakeServer, Server],
) -> None:
    server, running = fake
    code, transcript = await run_client(running, "rename the check\nc2\n/quit\n")
    assert code == 0, transcript
    assert "editing session · review mode: changes wait for your review" in transcript
    turn, answer = server.received
    assert turn["review"] is True and turn["content"] == "rename the check"
    assert answer == {"type": "review", "request_id": "p1", "accepted": ["c2"]}
    shown = between(transcript, "you> rename the check\n", review.PROMPT)
    assert "Proposed changes on v3: 2 changes" in shown
    assert "      ⚠ impact: 'Notify clinic' would no longer run." in shown
    assert "    -    name: Check coverage" in shown
    assert "? Apply these 2 changes?\n" in shown  # the reply above is not repeated
    assert transcript.count("Removed Check coverage; added Dedupe.") == 1
    applied = between(transcript, "  Accepting c2: applying…\n")
    assert "planner> Applied c2." in applied
    assert "── workflow now at v4 ──" in applied
    assert "Check eligibility [common, has code] *" in applied


async def test_a_dependent_change_asks_again_and_a_stale_proposal_says_nothing_was_saved(
    fake: tuple[FakeServer, Server],
) -> None:
    server, running = fake
    server.review_errors = ["dependent_change"]
    code, transcript = await run_client(running, "do it\nc2\na\n/quit\n")
    assert code == 0, transcript
    assert [f["accepted"] for f in server.received[1:]] == [["c2"], ["c1", "c2"]]
    again = between(transcript, "! dependent_change: dependent_change!\n", review.PROMPT)
    assert "a change you accepted needs one you left out; nothing was saved" in again
    assert "  Choose again: the proposal is still open." in again
    assert "Proposed changes" not in again  # asked again without repeating it all
    assert "── workflow now at v4 ──" in transcript

    server.received.clear()
    server.review_errors = ["stale_proposal"]
    code, transcript = await run_client(running, "do it\na\n/diff\n/quit\n")
    assert code == 0, transcript
    assert len(server.received) == 2  # the turn and one answer: nothing retried
    stale = transcript.split("! stale_proposal: stale_proposal!\n", 1)[1]
    assert stale.startswith(
        "  Not applied: the workflow changed since this proposal was made and its changes no "
        "longer fit; nothing was saved and the proposal is closed. Ask again for a new one.\n"
    )
    assert "No proposal is open" in stale  # /diff: the proposal is closed
    assert "A proposal is still open" not in stale

    code, transcript = await run_client(running, "do it\n")  # no answer, end of input
    assert code == 0, transcript
    assert transcript.endswith(
        "A proposal is still open in this session: `planwright chat --session s1` comes "
        "back to it.\n"
    )
    assert "workflow now at" not in transcript


async def test_a_proposal_open_when_the_session_opens_is_asked_first(
    fake: tuple[FakeServer, Server],
) -> None:
    server, running = fake
    frame = frames.proposal()
    pending = {
        "turn_id": "t1",
        "request_id": "p1",
        "question": frame["question"],
        "proposal": {k: frame[k] for k in ("base_version", "yaml", "diff", "changes")},
    }
    code, transcript = await run_client(running, "r\n/quit\n", pending=pending, review_mode=False)
    assert code == 0, transcript
    assert server.received == [{"type": "review", "request_id": "p1", "accepted": []}]
    assert transcript.index("A proposal is waiting for review:") < transcript.index("you> ")
    assert "  Rejected: nothing changes." in transcript
    assert "planner> No." in transcript
    assert "workflow now at" not in transcript


async def test_a_turn_while_a_proposal_is_open_brings_it_back(
    fake: tuple[FakeServer, Server],
) -> None:
    server, _running = fake
    rest = FakeRest()
    frame = frames.proposal()
    rest.pending = {"request_id": "p1", "question": "Apply?", "proposal": frame}

    async def refuse(ws: ServerConnection) -> None:
        async for raw in ws:
            sent = json.loads(raw)
            server.received.append(sent)
            if sent["type"] == "turn":
                await ws.send(
                    json.dumps({"type": "error", "code": "proposal_pending", "message": "open"})
                )
            else:
                await ws.send(json.dumps(server.completed(3)))

    async with serve(refuse, "127.0.0.1", 0) as refusing:
        code, transcript = await run_client(refusing, "another\nr\n/quit\n", rest=rest)
    assert code == 0, transcript
    assert "A proposal is still waiting for your answer: answer it first." in transcript
    assert "GET /v1/sessions/s1" in rest.calls
    assert server.received[-1] == {"type": "review", "request_id": "p1", "accepted": []}


async def test_the_prompt_comes_back_after_reconnecting_to_an_open_proposal(
    fake: tuple[FakeServer, Server],
) -> None:
    server, running = fake
    server.drop_after_turn = True
    rest = FakeRest()
    rest.pending = {
        "request_id": "p1",
        "question": "Apply these 2 changes?",
        "proposal": frames.proposal(),
    }
    port = running.sockets[0].getsockname()[1]
    stdout = io.StringIO()
    reader_in, writer = await _pipe()
    lines = LineReader(reader_in, asyncio.get_running_loop())
    client = ChatClient(
        rest=rest.rest(),
        out=Output(stdout),
        lines=lines,
        ws_url=f"ws://127.0.0.1:{port}/v1/sessions/s1/ws",
        session_id="s1",
        workflow_id="w1",
        read_only=False,
        name="Referral intake",
        version=3,
        yaml=frames.DOC,
        review=True,
    )
    task = asyncio.create_task(client.run())
    try:
        writer.write("rename the check\n")
        await _until(stdout, review.PROMPT)  # reconnected; the proposal came back
        assert server.connections == 2
        writer.write("a\n")
        await _until(stdout, "── workflow now at v4 ──")
        writer.write("/quit\n")
        assert await asyncio.wait_for(task, 10) == 0
    finally:
        writer.close()
        lines.close()
        if not task.done():
            task.cancel()
    transcript = stdout.getvalue()
    assert "Connection lost; reconnecting…" in transcript
    back = transcript.split("Reconnected.", 1)[1]
    assert "A proposal is waiting for review:" in back
    assert "Proposed changes on v3: 2 changes" in back
    assert server.received[-1] == {"type": "review", "request_id": "p1", "accepted": ["c1", "c2"]}


class _Writer:
    """The typing end of a pipe the client reads its lines from."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def close(self) -> None:
        os.close(self.fd)


async def _pipe() -> tuple[Any, _Writer]:
    read_fd, write_fd = os.pipe()
    return os.fdopen(read_fd, "r", encoding="utf-8"), _Writer(write_fd)


async def _until(stdout: io.StringIO, text: str, timeout: float = 15) -> None:
    await wait_until_async(
        lambda: text in stdout.getvalue(),
        timeout=timeout,
        message=lambda: f"no {text!r} in:\n{stdout.getvalue()}",
    )


async def test_run_sends_the_files_shows_progress_and_the_result_then_fix_sends_it(
    fake: tuple[FakeServer, Server], tmp_path: Path
) -> None:
    server, running = fake
    sample = tmp_path / "sample.json"
    sample.write_text(json.dumps({"data": {"patient": "p-1"}}), "utf-8")
    responses = tmp_path / "responses.json"
    responses.write_text(json.dumps([{"url": "https://intake.example/referrals"}]), "utf-8")
    script = f"/run @{sample} @{responses}\n/fix\n/quit\n"
    code, transcript = await run_client(running, script, review_mode=False)
    assert code == 0, transcript
    run, fix = server.received
    assert run == {
        "type": "run",
        "input": {"data": {"patient": "p-1"}},
        "responses": [
            {
                "method": "GET",
                "url": "https://intake.example/referrals",
                "status": 200,
                "body": None,
                "headers": {},
            }
        ],
    }
    shown = between(transcript, f"you> /run @{sample} @{responses}\n")
    assert "  … Running Get referrals (fetch)…\n  ✓ Get referrals (fetch) ran\n" in shown
    assert "  ✗ Check coverage (check) failed\n" in shown
    assert "✗ Test run of v3: failed (1.4 s)" in shown
    assert "      error: Error: no sample response for GET https://fhir.example/Coverage" in shown
    assert "    GET https://fhir.example/Coverage  (Check coverage)" in shown
    assert fix["type"] == "turn" and fix["content"] == runs.FIX_CONTENT
    assert fix["errors"] == runs.fix_errors(frames.failed_run(), {})
    assert "review" not in fix  # not a review-mode session
    assert "  Sending the failed run at Check coverage to the planner…" in transcript
    assert "planner> Fixed." in transcript


async def test_bad_run_files_send_nothing_and_fix_without_a_failed_run_says_so(
    fake: tuple[FakeServer, Server], tmp_path: Path
) -> None:
    server, running = fake
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", "utf-8")
    server.run_result = frames.succeeded_run()
    rest = FakeRest()
    script = f"/run @{bad}\n/run @{tmp_path}/missing.json\n/fix\n/run\n/fix\n/quit\n"
    code, transcript = await run_client(running, script, rest=rest, review_mode=False)
    assert code == 0, transcript
    assert server.received == [{"type": "run"}]  # only the good /run (empty input)
    assert f"{bad} is not valid JSON: Expecting property name" in transcript
    assert f"Cannot read {tmp_path}/missing.json: No such file or directory" in transcript
    first_fix, second_fix = transcript.split("you> /fix\n")[1:]
    assert first_fix.startswith("Nothing to fix: there is no test run yet.")
    assert "GET /v1/workflows/w1/runs" in rest.calls  # it asked the server first
    assert second_fix.startswith("Nothing to fix: the last test run succeeded.")
    assert "✓ Test run of v3: succeeded" in transcript


async def test_fix_finds_a_failed_run_made_before_this_client_opened(
    fake: tuple[FakeServer, Server],
) -> None:
    server, running = fake
    rest = FakeRest()
    rest.runs = [frames.failed_run(version=2)]
    code, transcript = await run_client(running, "/fix\n/quit\n", rest=rest, review_mode=False)
    assert code == 0, transcript
    (fix,) = server.received
    assert fix["errors"] == runs.fix_errors(frames.failed_run(version=2), {})
    assert "(that run was of v2; the workflow is now v3)" in transcript


async def test_errors_from_a_file_or_pasted_are_an_errors_mode_turn(
    fake: tuple[FakeServer, Server], tmp_path: Path
) -> None:
    server, running = fake
    log = tmp_path / "run.log"
    log.write_text("TypeError: state.data is undefined\n  at check\n", "utf-8")
    script = (
        f"/errors @{log} the check step crashes\n"
        "/errors\nReferenceError: x is not defined\n.\n"
        f"/errors {log}\n/errors @{tmp_path}/none.txt\n/quit\n"
    )
    code, transcript = await run_client(running, script, review_mode=False)
    assert code == 0, transcript
    from_file, pasted = server.received
    assert from_file["content"] == "the check step crashes"
    assert from_file["errors"] == "TypeError: state.data is undefined\n  at check\n"
    assert pasted["content"] == "Fix these errors"
    assert pasted["errors"] == "ReferenceError: x is not defined"
    assert "Usage: /errors @FILE [MESSAGE]" in transcript
    assert f"Cannot read {tmp_path}/none.txt: No such file or directory" in transcript


async def test_a_read_only_session_runs_but_neither_fixes_nor_answers(
    fake: tuple[FakeServer, Server],
) -> None:
    server, running = fake
    code, transcript = await run_client(
        running, "/run\n/fix\n/errors @x\n/quit\n", read_only=True, review_mode=False
    )
    assert code == 0, transcript
    assert server.received == [{"type": "run"}]
    assert transcript.count("This is a read-only session: an editor can fix the workflow.") == 2
