"""One chat session: the prompt loop, slash commands, turns over the WebSocket
(with confirmations and plan reviews), and the frames the server sends (status
lines, streamed answers, workflow changes made here or elsewhere, plan progress),
reconnecting when the connection drops.

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

from app.client import plan
from app.client.rest import ChatError, Rest
from app.client.terminal import LineReader, Output, ask
from app.client.tree import changed_keys, render_tree
from tools.document import WorkflowDocument

RECONNECT_ATTEMPTS = 8
FATAL_CLOSE_CODES = {1008: "the server refused the token", 4404: "the session no longer exists"}
HELP = """\
Say what you want in plain English, e.g. "add a step called Dedupe with common after Fetch".
Commands:
  /plan TEXT   send TEXT as a plan-mode turn (propose workflows for review); /plan alone
               reads a pasted spec until a line with just "."; /plan @FILE sends a file
  /project     the project's workflows and where its plan stands
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
    """The session's pending confirmation when it opened (a plan waiting for review)."""
    ws: ClientConnection | None = None
    turn_events: asyncio.Queue[tuple[str, dict[str, Any]]] = field(default_factory=asyncio.Queue)
    in_turn: bool = False
    streamed: bool = False
    turn_changes: set[str] = field(default_factory=set)
    turn_start_version: int = 0
    quitting: bool = False
    fatal: str | None = None
    plan_names: dict[str, str] = field(default_factory=dict)

    @property
    def on_project(self) -> bool:
        return self.workflow_id is None

    async def run(self) -> int:
        mode = "read-only session: questions only" if self.read_only else "editing session"
        if self.on_project:
            self.out.line(f"Project {self.name!r} · {mode.replace('editing', 'planning')}")
            await plan.show_project(self.rest, self.out, self.project_id)
        else:
            self.out.line(f"Workflow {self.name!r} v{self.version} · {mode}")
            self.print_tree(set())
        self.out.line(self.out.paint("Type /help for commands, /quit to leave.", "dim"))
        await self.connect()
        receiver = asyncio.create_task(self.receive())
        try:
            review = plan.review_from(self.pending)
            if review is not None:  # proposed before this client opened the session
                self.out.line("A plan is waiting for review:")
                self.begin_turn()
                self.turn_events.put_nowait(("plan", review))
                await self.wait_for_turn()
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
            line = await ask(self.out, self.lines, self.out.paint("you> ", "cyan"))
            if line is None:
                return 0
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                if await self.command(text) == "quit":
                    return 0
                continue
            await self.turn(text)

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
            elif self.on_project and name in ("/yaml", "/tree", "/versions", "/revert"):
                self.out.line(f"{name} works on one workflow; this is a project session.")
            elif name == "/yaml":
                self.out.write(self.yaml if self.yaml.endswith("\n") else self.yaml + "\n")
            elif name == "/tree":
                self.print_tree(set())
            elif name == "/versions":
                await self.versions()
            elif name == "/revert":
                await self.revert(rest.strip())
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

    # --- turns ---

    async def turn(self, text: str, mode: str | None = None) -> None:
        if self.ws is None:
            self.out.line("Not connected; try again in a moment.")
            return
        frame: dict[str, Any] = {"type": "turn", "content": text, "context": {"page": "workflow"}}
        if mode or self.mode:
            frame["mode"] = mode or self.mode
        self.begin_turn()
        try:
            await self.ws.send(json.dumps(frame))
        except ConnectionClosed:
            self.in_turn = False
            self.out.line("Not connected, so that was not sent; try again in a moment.")
            return
        await self.wait_for_turn()

    def begin_turn(self) -> None:
        self.in_turn = True
        self.streamed = False
        self.turn_changes = set()
        self.turn_start_version = self.version
        while not self.turn_events.empty():
            self.turn_events.get_nowait()

    async def wait_for_turn(self) -> None:
        while True:
            kind, frame = await self.turn_events.get()
            if kind in ("confirm", "plan"):
                answered = await (self.confirm(frame) if kind == "confirm" else self.review(frame))
                if answered is None:
                    return
                self.in_turn = True
                continue
            return

    async def review(self, review: dict[str, Any]) -> bool | None:
        """Show a proposed plan and send the user's answer; None when not answered."""
        self.plan_names = {w["key"]: w["name"] for w in review["plan"].get("workflows", [])}
        answer = await plan.ask_review(self.out, self.lines, review, read_only=self.read_only)
        if answer is None:
            return None
        if self.ws is None:
            self.out.line("  Not connected; answer again after reconnecting.")
            return None
        await self.ws.send(json.dumps(answer.frame(str(review["request_id"]))))
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
            return
        self.fatal = "the connection to the server was lost"
        self.turn_events.put_nowait(("lost", {}))

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
        elif kind == "message.delta":
            if not self.streamed:
                self.out.end_line()
                self.out.partial(self.out.paint("planner> ", "bold"))
                self.streamed = True
            self.out.partial(frame.get("text", ""))
        elif kind == "message":
            if not self.streamed:
                self.out.line(self.out.paint("planner> ", "bold") + frame.get("text", ""))
            else:
                self.out.end_line()
            self.streamed = False
        elif kind == "turn.completed":
            self.out.end_line()
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
            if self.in_turn or code in ("busy", "no_pending_confirmation"):
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
