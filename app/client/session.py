"""One chat session: the prompt loop, slash commands, turns over the WebSocket
(with confirmations, plan reviews and review-mode proposals), test runs and fixing a
failed one, and the frames the server sends (status lines, streamed answers, workflow
changes made here or elsewhere, plan and run progress), reconnecting when the
connection drops.

A session is on one workflow, or on a project (``workflow_id`` None: a project
session, whose turns plan the project's workflows; DESIGN §5a)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI

from app.client import plan, review, runs
from app.client.rest import ChatError, Rest
from app.client.terminal import LineReader, Output, ask
from app.client.tree import changed_keys, render_tree
from tools.document import WorkflowDocument

RECONNECT_ATTEMPTS = 8
FRAME_LIMIT = 60_000
"""Bytes of a ``run`` frame sent over the socket (the server's default frame limit is
64 KiB, and a bigger frame closes the socket); a bigger run goes over REST."""
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
FATAL_CLOSE_CODES = {1008: "the server refused the token", 4404: "the session no longer exists"}
HELP = """\
Say what you want in plain English, e.g. "add a step called Dedupe with common after Fetch".
Commands:
  /plan TEXT   send TEXT as a plan-mode turn (propose workflows for review); /plan alone
               reads a pasted spec until a line with just "."; /plan @FILE sends a file
  /project     the project's workflows and where its plan stands
  /run [@INPUT.json [@RESPONSES.json]]
               test-run the workflow in OpenFn's runtime on a sample input (a JSON
               state, {"data": {...}}) with sample answers for its HTTP calls (a JSON
               list of {method, url, status, body}); no file: an empty input
  /fix         hand the last failed test run (step, error, input) to the planner
  /errors @FILE [MESSAGE]
               send the errors in FILE (a log, a stack trace) with MESSAGE (default
               "Fix these errors") for the planner to fix; /errors alone reads pasted
               lines up to one with just "."
  /review      show the proposal waiting for review again, and answer it
  /diff        the whole diff of the open proposal
  /tree        show the workflow as a tree
  /yaml        print the workflow YAML
  /versions    list the versions (who, when, which tool, what)
  /revert N    make version N current again (saved as a new version)
  /help        this help
  /quit        leave (also Ctrl-D)"""


@dataclass
class ChatClient:
    rest: Rest
    out: Output
    lines: LineReader
    ws_url: str
    session_id: str
    workflow_id: str | None
    """None on a project session."""
    read_only: bool
    name: str
    version: int
    yaml: str
    project_id: str | None = None
    mode: str | None = None
    """The mode every turn is sent with (``--mode``); None: the server's default."""
    pending: dict[str, Any] | None = None
    """The session's pending confirmation when it opened (a plan or a proposal waiting
    for review)."""
    review: bool = False
    """Review mode (``--review``): turns work on a draft and end with a proposal to accept
    all, some or none of (DESIGN §5c); every turn frame says so too."""
    ws: ClientConnection | None = None
    turn_events: asyncio.Queue[tuple[str, dict[str, Any]]] = field(default_factory=asyncio.Queue)
    in_turn: bool = False
    streamed: bool = False
    turn_changes: set[str] = field(default_factory=set)
    turn_start_version: int = 0
    quitting: bool = False
    fatal: str | None = None
    plan_names: dict[str, str] = field(default_factory=dict)
    proposal: dict[str, Any] | None = None
    """The review-mode proposal last seen open (``review.proposal_from``'s form)."""
    prompting: str | None = None
    """The request id of the proposal whose review prompt is showing."""
    answered: set[str] = field(default_factory=set)
    """Request ids of the proposals answered here (the server may still list one as open
    for a moment after the answer is sent)."""
    reopened: dict[str, Any] | None = None
    """A proposal found open after reconnecting: the prompt loop shows it next."""
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    """Set to interrupt the ``you>`` prompt (a proposal came back after reconnecting)."""
    running: bool = False
    """A ``/run`` is waiting for its ``run.completed``."""
    last_run: dict[str, Any] | None = None
    """The last test run seen in this session (a ``/run`` or the planner's)."""
    said: str = ""
    """The turn's reply as shown so far (a proposal's question repeats it: a review-mode
    turn streams its reply and then ends with the proposal, no ``message`` between)."""

    @property
    def on_project(self) -> bool:
        return self.workflow_id is None

    async def run(self) -> int:
        mode = "read-only session: questions only" if self.read_only else "editing session"
        if self.on_project:
            self.out.line(f"Project {self.name!r} · {mode.replace('editing', 'planning')}")
            await plan.show_project(self.rest, self.out, self.project_id)
        else:
            if self.review and not self.read_only:
                mode += " · review mode: changes wait for your review"
            self.out.line(f"Workflow {self.name!r} v{self.version} · {mode}")
            self.print_tree(set())
        self.out.line(self.out.paint("Type /help for commands, /quit to leave.", "dim"))
        await self.connect()
        receiver = asyncio.create_task(self.receive())
        try:
            planned = plan.review_from(self.pending)
            proposal = review.proposal_from(self.pending)
            if planned is not None:  # proposed before this client opened the session
                self.out.line("A plan is waiting for review:")
                self.begin_turn()
                self.turn_events.put_nowait(("plan", planned))
                await self.wait_for_turn()
            elif proposal is not None:
                self.reopened = proposal  # the loop shows it first
            return await self.loop()
        finally:
            self.quitting = True
            receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await receiver
            if self.ws is not None:
                with contextlib.suppress(Exception):
                    await self.ws.close()

    async def connect(self) -> None:
        try:
            self.ws = await connect(self.ws_url, max_size=None, open_timeout=10)
        except InvalidStatus as exc:
            raise ChatError(f"the server refused the chat connection ({exc})", 2) from exc
        except (OSError, InvalidURI, TimeoutError) as exc:
            raise ChatError(f"cannot open the chat connection: {exc}", 2) from exc

    async def loop(self) -> int:
        while True:
            if self.fatal:
                self.out.line(f"error: {self.fatal}")
                return 2
            if self.reopened is not None:
                proposal, self.reopened = self.reopened, None
                if proposal["request_id"] in self.answered:
                    continue  # answered while it was being found again
                self.out.line("A proposal is waiting for review:")
                await self.review_proposal(proposal)
                continue
            line = await self.prompt()
            if line is None:
                return self.leaving()
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                if await self.command(text) == "quit":
                    return self.leaving()
                continue
            await self.turn(text)

    def leaving(self) -> int:
        if self.proposal is not None:  # it waits at the server: say how to come back to it
            self.out.line(
                f"A proposal is still open in this session: `planwright chat --session "
                f"{self.session_id}` comes back to it."
            )
        return 0

    async def prompt(self) -> str | None:
        """The ``you>`` line (None at end of input), or ``""`` (a blank line, which the
        loop skips) when :attr:`wakeup` interrupts the wait; a read cancelled while it
        waits loses no line (the line was still in the queue)."""
        self.out.partial(self.out.paint("you> ", "cyan"))
        read = asyncio.ensure_future(self.lines.read())
        woken = asyncio.ensure_future(self.wakeup.wait())
        try:
            await asyncio.wait({read, woken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
        if not read.done():
            read.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await read
            self.wakeup.clear()
            self.out.line()
            return ""
        self.wakeup.clear()
        line = read.result()
        if line is None:
            self.out.line()
        elif self.lines.interactive:
            self.out.typed()
        else:
            self.out.echo(line)
        return line

    # --- commands ---

    async def command(self, text: str) -> str | None:
        name, _, rest = text.partition(" ")
        name = name.lower()
        try:
            if name in ("/quit", "/exit", "/q"):
                return "quit"
            if name == "/help":
                self.out.lines(HELP.splitlines())
            elif name == "/plan":
                if (spec := await plan.read_spec(self.out, self.lines, rest.strip())) is not None:
                    await self.turn(spec, mode="plan")
            elif name == "/project":
                await plan.show_project(self.rest, self.out, self.project_id)
            elif self.on_project and name in (
                "/yaml",
                "/tree",
                "/versions",
                "/revert",
                "/run",
                "/fix",
                "/errors",
                "/review",
                "/diff",
            ):
                self.out.line(f"{name} works on one workflow; this is a project session.")
            elif name == "/yaml":
                self.out.write(self.yaml if self.yaml.endswith("\n") else self.yaml + "\n")
            elif name == "/tree":
                self.print_tree(set())
            elif name == "/versions":
                await self.versions()
            elif name == "/revert":
                await self.revert(rest.strip())
            elif name == "/run":
                await self.test_run(rest.strip())
            elif name == "/fix":
                await self.fix()
            elif name == "/errors":
                await self.errors(rest.strip())
            elif name == "/review":
                await self.review_again()
            elif name == "/diff":
                if self.proposal is None:
                    self.out.line("No proposal is open (/review asks the server).")
                else:
                    self.out.lines(review.diff_lines(self.proposal["diff"], self.out.paint))
            else:
                self.out.line(f"Unknown command {name}; /help lists them.")
        except ChatError as exc:
            self.out.line(f"error: {exc.message}")
        return None

    async def versions(self) -> None:
        versions = await self.rest.call("GET", f"/v1/workflows/{self.workflow_id}/versions")
        for v in versions:
            current = " (current)" if v["version"] == versions[0]["version"] else ""
            when = str(v.get("created_at", ""))[:19].replace("T", " ")
            tool, author = v.get("tool") or "edit", v.get("author") or "?"
            self.out.line(
                f"  v{v['version']:<3} {tool:<16} {author:<20} {when}  "
                f"{v.get('summary', '')}{current}"
            )

    async def revert(self, argument: str) -> None:
        if self.read_only:
            self.out.line("This is a read-only session: it cannot revert.")
            return
        if not argument.lstrip("v").isdigit():
            self.out.line("Usage: /revert N  (see /versions)")
            return
        target = int(argument.lstrip("v"))
        before = self.yaml
        self.in_turn = True  # its own frame may arrive first: fold it into this output
        try:
            result = await self.rest.call(
                "POST", f"/v1/workflows/{self.workflow_id}/revert", json={"version": target}
            )
        finally:
            self.in_turn = False
        if result["version"] > self.version:
            self.apply(result["version"], result["yaml"])
        self.out.line(f"Reverted to v{target}; saved as v{result['version']}.")
        self.print_tree(changed_keys(before, self.yaml))

    # --- test runs and fixing ---

    async def test_run(self, argument: str) -> None:
        """``/run``: send the ``run`` frame, show its progress and the finished run."""
        files = runs.read_run_files(argument)
        if isinstance(files, str):
            self.out.line(files)  # bad file or JSON: nothing is sent
            return
        frame = files.frame()
        if len(json.dumps(frame).encode()) > FRAME_LIMIT:
            # Too big for one socket frame (the server would close the socket): the same
            # run over REST, without progress lines.
            self.out.line("  (a large sample: running it over HTTP, without progress lines)")
            body = {k: v for k, v in frame.items() if k != "type"}
            run = await self.rest.call("POST", f"/v1/workflows/{self.workflow_id}/runs", json=body)
            self.show_run(run)
            return
        if self.ws is None:
            self.out.line("Not connected; try again in a moment.")
            return
        self.running = True
        while not self.turn_events.empty():
            self.turn_events.get_nowait()
        try:
            await self.ws.send(json.dumps(frame))
        except ConnectionClosed:
            self.running = False
            self.out.line("Not connected, so that was not sent; try again in a moment.")
            return
        self.out.line(self.out.paint("  Test-running the workflow in OpenFn's runtime…", "dim"))
        while True:
            kind, _ = await self.turn_events.get()
            if kind in ("run", "error", "lost"):
                break
        self.running = False

    def show_run(self, run: dict[str, Any]) -> None:
        self.last_run = run
        self.out.end_line()
        self.out.lines(runs.render_run(run, runs.step_names(self.yaml), self.out.paint))

    async def fix(self) -> None:
        """``/fix``: the last failed test run as an errors-mode turn."""
        if self.read_only:
            self.out.line("This is a read-only session: an editor can fix the workflow.")
            return
        run = self.last_run
        if run is None:  # none in this client: the workflow's newest run, if any
            found = await self.rest.call("GET", f"/v1/workflows/{self.workflow_id}/runs")
            newest = (found.get("runs") or []) if isinstance(found, dict) else []
            run = newest[0] if newest else None
        errors = runs.fix_errors(run, runs.step_names(self.yaml)) if run else None
        if errors is None:
            status = str(run.get("status")) if run else ""
            words = runs.STATUS_WORDS.get(status, ("", "", status))[2]
            what = f"the last test run {words}" if run else "there is no test run yet"
            self.out.line(f"Nothing to fix: {what}. /run tests the workflow.")
            return
        step = runs.failed_step(run) if run else None
        where = f" at {step.get('name') or step.get('key')}" if step else ""
        if run and run.get("version") not in (None, self.version):
            self.out.line(
                f"  (that run was of v{run['version']}; the workflow is now v{self.version})"
            )
        self.out.line(f"  Sending the failed run{where} to the planner…")
        await self.turn(runs.FIX_CONTENT, errors=errors)

    async def errors(self, argument: str) -> None:
        """``/errors @FILE [MESSAGE]`` (or pasted lines): an errors-mode turn."""
        if self.read_only:
            self.out.line("This is a read-only session: an editor can fix the workflow.")
            return
        message = ""
        if argument.startswith("@"):
            path, _, message = argument[1:].partition(" ")
            try:
                with open(path, encoding="utf-8") as file:
                    text = file.read()
            except (OSError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
                self.out.line(f"Cannot read {path}: {reason or exc}")
                return
        elif argument:
            self.out.line("Usage: /errors @FILE [MESSAGE], or /errors alone to paste them")
            return
        else:
            self.out.line('Paste the errors, then a line with just "." to send them.')
            pasted: list[str] = []
            while (line := await self.lines.read()) is not None and line.strip() != ".":
                if not self.lines.interactive:
                    self.out.echo(line)  # scripted input: keep the transcript readable
                pasted.append(line)
            text = "\n".join(pasted)
        if not text.strip():
            self.out.line("No errors to send.")
            return
        if len(text) > runs.ERRORS_LIMIT:
            self.out.line(
                f"Those errors are {len(text)} characters; a turn takes at most "
                f"{runs.ERRORS_LIMIT}. Send the part that matters."
            )
            return
        await self.turn(message.strip() or "Fix these errors", errors=text)

    # --- turns ---

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

    # --- frames ---

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
        delay = 0.5
        for _ in range(RECONNECT_ATTEMPTS):
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
            try:
                self.ws = await connect(self.ws_url, max_size=None, open_timeout=10)
            except (OSError, InvalidStatus, TimeoutError):
                continue
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

    def apply(self, version: int, yaml: str) -> None:
        self.version, self.yaml = version, yaml
        with contextlib.suppress(Exception):
            self.name = WorkflowDocument.from_yaml(yaml).name or self.name

    def print_tree(self, changed: set[str]) -> None:
        self.out.lines(render_tree(self.yaml, changed=changed, paint=self.out.paint))
