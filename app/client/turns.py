"""A turn of a chat session: the ``turn`` frame sent, then waiting for its end while
answering what it asks on the way (a confirmation, a plan to review, a review-mode
proposal to accept all, some or none of), and ``/review`` bringing back an open
proposal. The frames themselves arrive in :mod:`app.client.frames`, which queues
what a turn waits for on ``turn_events``."""

from __future__ import annotations

import json
from typing import Any

from websockets.exceptions import ConnectionClosed

from app.client import plan, review
from app.client.state import SessionState
from app.client.terminal import ask


class Turns(SessionState):
    """Sending a turn and answering it; mixed into the ChatClient."""

    async def turn(self, text: str, mode: str | None = None, errors: str | None = None) -> None:
        if self.ws is None:
            self.out.line("Not connected; try again in a moment.")
            return
        frame: dict[str, Any] = {"type": "turn", "content": text, "context": {"page": "workflow"}}
        if mode or self.mode:
            frame["mode"] = mode or self.mode
        if errors is not None:
            frame["errors"] = errors
        if self.review and not self.on_project:
            frame["review"] = True
        self.sent, self.offered_plan = text, None
        self.begin_turn()
        try:
            await self.ws.send(json.dumps(frame))
        except ConnectionClosed:
            self.in_turn = False
            self.out.line("Not connected, so that was not sent; try again in a moment.")
            return
        ended = await self.wait_for_turn()
        if ended is not None and ended.get("code") == "proposal_pending":
            await self.review_again()  # answer the open proposal first

    def begin_turn(self) -> None:
        self.in_turn = True
        self.streamed = False
        self.turn_changes = set()
        self.turn_start_version = self.version
        self.said = ""
        while not self.turn_events.empty():
            self.turn_events.get_nowait()

    async def wait_for_turn(self) -> dict[str, Any] | None:
        """Wait for the turn's end, answering what it asks on the way; the error frame
        that ended it, if one did."""
        while True:
            kind, frame = await self.turn_events.get()
            if kind in ("confirm", "plan"):
                answered = await (
                    self.confirm(frame) if kind == "confirm" else self.review_plan(frame)
                )
                if answered is None:
                    return None
                self.in_turn = True
                continue
            if kind == "proposal":
                if await self.answer_proposal(frame) is None:
                    return None
                self.in_turn = True
                continue
            if kind == "error" and frame.get("code") == "dependent_change":
                if self.proposal is None:
                    return frame
                self.answered.discard(self.proposal["request_id"])  # still open: answer again
                if await self.answer_proposal(self.proposal, show=False) is None:
                    return frame
                self.in_turn = True
                continue
            return frame if kind == "error" else None

    async def review_proposal(self, proposal: dict[str, Any]) -> None:
        """Prompt for a proposal outside a turn (open when the session opened, or found
        again), then follow the turn its answer finishes."""
        self.begin_turn()
        self.turn_events.put_nowait(("proposal", proposal))
        await self.wait_for_turn()

    async def review_again(self) -> None:
        """``/review``: the session's open proposal, as the server has it, and its prompt."""
        detail = await self.rest.call("GET", f"/v1/sessions/{self.session_id}")
        proposal = review.proposal_from(detail.get("pending_confirmation"))
        if proposal is None:
            self.proposal = None
            self.out.line("No proposal is waiting for review.")
            return
        await self.review_proposal(proposal)

    async def answer_proposal(self, proposal: dict[str, Any], show: bool = True) -> bool | None:
        """Show a review-mode proposal and send the user's answer; None when not answered
        (it stays open at the server: ``/review`` brings it back)."""
        self.proposal = proposal
        self.prompting = proposal["request_id"]
        try:
            if not show:
                self.out.line("  Choose again: the proposal is still open.")
            answer = await review.ask_review(
                self.out, self.lines, proposal, read_only=self.read_only, show=show
            )
        finally:
            self.prompting = None
        if answer is None:
            return None
        if self.ws is None:
            self.out.line("  Not connected; answer again after reconnecting (/review).")
            return None
        try:
            await self.ws.send(json.dumps(answer.frame(proposal["request_id"])))
        except ConnectionClosed:
            self.out.line("  Not connected, so that was not sent; /review after reconnecting.")
            return None
        self.answered.add(proposal["request_id"])
        self.out.line(review.answered_text(answer, review.change_ids(proposal)))
        return bool(answer.accepted)

    async def review_plan(self, planned: dict[str, Any]) -> bool | None:
        """Show a proposed plan and send the user's answer; None when not answered."""
        self.plan_names = {w["key"]: w["name"] for w in planned["plan"].get("workflows", [])}
        answer = await plan.ask_review(self.out, self.lines, planned, read_only=self.read_only)
        if answer is None:
            return None
        if self.ws is None:
            self.out.line("  Not connected; answer again after reconnecting.")
            return None
        await self.ws.send(json.dumps(answer.frame(str(planned["request_id"]))))
        self.out.line(plan.ANSWERED[answer.action])
        return answer.action == "approve"

    async def confirm(self, frame: dict[str, Any]) -> bool | None:
        self.out.line(self.out.paint(f"? {frame['question']}", "yellow"))
        if self.read_only:
            return None
        while True:
            answer = await ask(self.out, self.lines, "  Approve? [y/n] ")
            if answer is None:
                self.out.line("  (no answer: the change stays paused; nothing was removed)")
                return None
            choice = answer.strip().lower()
            if choice in ("y", "yes", "n", "no"):
                break
            self.out.line("  Please answer y or n.")
        approved = choice in ("y", "yes")
        message = {"type": "confirm", "request_id": frame["request_id"], "approved": approved}
        if self.ws is None:
            self.out.line("  Not connected; answer again after reconnecting.")
            return None
        await self.ws.send(json.dumps(message))
        self.out.line("  Approved." if approved else "  Cancelled.")
        return approved
