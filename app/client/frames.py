"""The frames the server sends a chat session, and reconnecting when the connection
drops: status lines, streamed answers, workflow changes made here or elsewhere, plan
and run progress, errors; what a waiting turn or ``/run`` needs goes on
``turn_events``. After a reconnect the workflow catches up and an open proposal not on
screen comes back."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.client import plan, review, runs
from app.client.rest import ChatError
from app.client.state import SessionState
from app.client.tree import changed_keys

RECONNECT_ATTEMPTS = 8
RECONNECT_FIRST_S = 0.5
RECONNECT_MAX_S = 5.0
ERROR_ENDS_WAIT = {
    "busy",
    "no_pending_confirmation",
    "no_pending_proposal",
    "stale_proposal",
    "dependent_change",
    "proposal_pending",
}
ERROR_HELP = {
    "stale_proposal": "Not applied: the workflow changed since this proposal was made and its "
    "changes no longer fit; nothing was saved and the proposal is closed. Ask again for a "
    "new one.",
    "dependent_change": "Not applied: a change you accepted needs one you left out; nothing "
    "was saved. Accept both, or leave out the one that needs the other.",
    "no_pending_proposal": "That proposal is no longer open (answered elsewhere, or closed).",
    "proposal_pending": "A proposal is still waiting for your answer: answer it first.",
}
FATAL_CLOSE_CODES = {
    1008: "the server refused the token",
    4400: "the server refused the connection's parameters",
    4404: "the session no longer exists",
}


class Frames(SessionState):
    """The receiving side of the socket; mixed into the ChatClient, which provides these:"""

    show_run: Callable[[dict[str, Any]], None]

    async def receive(self) -> None:
        while not self.quitting:
            ws = self.ws
            if ws is None:
                return
            try:
                async for raw in ws:
                    try:
                        frame = json.loads(raw)
                    except ValueError:
                        continue
                    self.handle(frame)
            except ConnectionClosed:
                pass
            if self.quitting:
                return
            code = ws.close_code
            if code in FATAL_CLOSE_CODES:
                self.fatal = FATAL_CLOSE_CODES[code]
                self.ws = None
                self.turn_events.put_nowait(("lost", {}))
                return
            await self.reconnect()

    async def reconnect(self) -> None:
        self.ws = None
        self.out.line(self.out.paint("Connection lost; reconnecting…", "yellow"))
        if self.in_turn:
            self.in_turn = False
            self.out.line("  (the turn goes on at the server; its reply is kept in the session)")
            self.turn_events.put_nowait(("lost", {}))
        elif self.running:
            self.out.line("  (the test run's result is kept: /fix finds it when it failed)")
            self.turn_events.put_nowait(("lost", {}))

        async def open_socket() -> ClientConnection:
            return await connect(self.ws_url, max_size=None, open_timeout=10)

        # RECONNECT_ATTEMPTS tries, the first after RECONNECT_FIRST_S, the wait doubling.
        await asyncio.sleep(RECONNECT_FIRST_S)
        self.ws = await AsyncRetrying(
            wait=wait_exponential(multiplier=2 * RECONNECT_FIRST_S, max=RECONNECT_MAX_S),
            stop=stop_after_attempt(RECONNECT_ATTEMPTS),
            retry=retry_if_exception_type((OSError, InvalidStatus, TimeoutError)),
            retry_error_callback=lambda _state: None,
        )(open_socket)
        if self.ws is not None:
            self.out.line(self.out.paint("Reconnected.", "green"))
            with contextlib.suppress(ChatError):
                current = await self.rest.call("GET", f"/v1/workflows/{self.workflow_id}")
                if current["version"] > self.version:
                    before = self.yaml
                    self.apply(current["version"], current["yaml"])
                    self.out.line(f"Caught up to v{self.version}:")
                    self.print_tree(changed_keys(before, self.yaml))
            with contextlib.suppress(ChatError):
                await self.find_open_proposal()
            return
        self.fatal = "the connection to the server was lost"
        self.turn_events.put_nowait(("lost", {}))

    async def find_open_proposal(self) -> None:
        """After reconnecting: a proposal open at the server and not on screen (the turn
        ended while the connection was down, or another device made it) comes back."""
        if self.on_project:
            return
        detail = await self.rest.call("GET", f"/v1/sessions/{self.session_id}")
        proposal = review.proposal_from(detail.get("pending_confirmation"))
        if proposal is None or proposal["request_id"] in (self.prompting, *self.answered):
            return
        self.reopened = proposal
        self.wakeup.set()

    def handle(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "turn.started":
            if not self.in_turn:  # resumed after a confirmation
                self.in_turn = True
        elif kind == "queued":
            position = frame.get("position")
            subject = "project" if self.on_project else "workflow"
            text = f"  queued: another turn runs on this {subject}; you are {position} in line"
            self.out.line(self.out.paint(text, "dim"))
        elif kind == "route":
            if frame.get("destination") == "job_code":
                self.out.line(self.out.paint("  → the step-code agent", "dim"))
        elif kind == "status":
            if frame.get("phase") == "spinner":
                self.out.spinner(frame.get("text", ""))
            else:
                self.out.settled(frame.get("text", ""))
        elif kind == "workflow":
            self.on_workflow(frame)
        elif kind == "confirm.required":
            self.in_turn = False
            self.turn_events.put_nowait(("confirm", frame))
        elif kind == "plan.proposed":
            self.in_turn = False
            self.turn_events.put_nowait(("plan", plan.review_from(frame) or frame))
        elif kind == "plan.progress":
            plan.show_progress(self.out, frame, self.plan_names)
        elif kind == "proposal":
            self.in_turn = False
            self.out.end_line()
            self.streamed = False  # the reply streamed so far ended with the proposal
            proposal = review.proposal_from(frame)
            if proposal is not None:
                proposal["question"] = review.unsaid(proposal["question"], self.said)
                self.turn_events.put_nowait(("proposal", proposal))
        elif kind == "run.progress":
            phase, text = runs.progress_line(frame, runs.step_names(self.yaml))
            if phase == "spinner":
                self.out.spinner(text)
            else:
                self.out.settled(text, mark="✗" if phase == "failed" else "✓")
        elif kind == "run.completed":
            if isinstance(frame.get("run"), dict):
                self.show_run(frame["run"])
            if self.running and not frame.get("turn_id"):
                self.turn_events.put_nowait(("run", frame))  # the /run's own (a turn's goes on)
        elif kind == "message.delta":
            if not self.streamed:
                self.out.end_line()
                self.out.partial(self.out.paint("planner> ", "bold"))
                self.streamed = True
            self.said += str(frame.get("text", ""))
            self.out.partial(frame.get("text", ""))
        elif kind == "message":
            self.said = str(frame.get("text", ""))
            if not self.streamed:
                self.out.line(self.out.paint("planner> ", "bold") + frame.get("text", ""))
            else:
                self.out.end_line()
            self.streamed = False
            if frame.get("offer") == "plan" and self.sent:
                self.offered_plan = self.sent
                self.out.line(self.out.paint("  /plan sends that message again as a plan.", "dim"))
        elif kind == "turn.completed":
            self.out.end_line()
            self.proposal = None  # a turn that ends has no proposal open
            if self.version != self.turn_start_version:
                self.out.line(self.out.paint(f"── workflow now at v{self.version} ──", "dim"))
                self.print_tree(self.turn_changes)
            self.in_turn = False
            self.turn_events.put_nowait(("done", frame))
        elif kind == "error":
            code = frame.get("code", "error")
            message = frame.get("message", "")
            if code == "busy":
                subject = "project" if self.on_project else "workflow"
                message = f"another turn is running on this {subject}; try again when it finishes"
            self.out.line(self.out.paint(f"! {code}: {message}", "red"))
            explained = ERROR_HELP.get(code)
            if explained:
                self.out.line(f"  {explained}")
            if code in ("stale_proposal", "no_pending_proposal"):
                self.proposal = None  # closed at the server
            if code == "dependent_change" and frame.get("changes"):
                self.out.line(f"  The changes in question: {', '.join(map(str, frame['changes']))}")
            if self.in_turn or self.running or code in ERROR_ENDS_WAIT:
                self.in_turn = False
                self.turn_events.put_nowait(("error", frame))

    def on_workflow(self, frame: dict[str, Any]) -> None:
        if frame.get("workflow_id") not in (None, self.workflow_id):
            return  # another workflow of the project (a plan build): plan.progress tells
        version = int(frame.get("version", 0))
        if version <= self.version:
            return
        before = self.yaml
        self.apply(version, frame.get("yaml", ""))
        keys = {c["key"] for c in frame.get("changes", []) if c.get("action") != "removed"}
        if not keys or "*" in keys:
            keys = changed_keys(before, self.yaml)
        if self.in_turn:
            self.turn_changes |= keys
            return
        # A change made elsewhere (another client, a revert): show it now.
        what = "; ".join(
            f"{c.get('action')} {c.get('kind')} {c.get('key')}"
            for c in frame.get("changes", [])
            if c.get("key") != "*"
        )
        self.out.line(self.out.paint(f"── changed elsewhere: now v{version} {what} ──", "dim"))
        self.print_tree(keys)
