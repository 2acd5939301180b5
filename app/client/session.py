"""``planwright chat``: the terminal client.

Chat with the planner over the session WebSocket: status lines per tool as
they run and settle, the streamed answer, a compact tree of the workflow after
each change, y/n confirmation prompts, and ``/yaml``, ``/versions``,
``/revert N``, ``/tree``, ``/help``, ``/quit``.

``run_chat(args, stdin, stdout)`` takes its streams as arguments, so tests drive
it on their own event loop with a scripted stdin and a captured stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO
from urllib.parse import quote, urlsplit, urlunsplit

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI

from tools.document import WorkflowDocument
from tools.document.structure import Edge, Structure

DEFAULT_URL = "http://127.0.0.1:8000"
RECONNECT_ATTEMPTS = 8
FATAL_CLOSE_CODES = {1008: "the server refused the token", 4404: "the session no longer exists"}
HELP = """\
Say what you want in plain English, e.g. "add a step called Dedupe with common after Fetch".
Commands:
  /tree        show the workflow as a tree
  /yaml        print the workflow YAML
  /versions    list the versions (who, when, which tool, what)
  /revert N    make version N current again (saved as a new version)
  /help        this help
  /quit        leave (also Ctrl-D)"""


class ChatError(Exception):
    """A problem that ends the client with a message and an exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message, self.code = message, code


# --- the command ---------------------------------------------------------------------


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``chat`` to a ``planwright`` subcommand parser."""
    chat: argparse.ArgumentParser = subparsers.add_parser(
        "chat",
        help="chat with the planner in the terminal",
        description="Chat with the planner about one workflow, over the service's WebSocket.",
    )
    target = chat.add_mutually_exclusive_group()
    target.add_argument("--workflow", metavar="ID", help="open this workflow")
    target.add_argument("--new", metavar="NAME", help="create a workflow with this name")
    chat.add_argument("--read-only", action="store_true", help="questions only; no changes")
    chat.add_argument(
        "--url",
        default=os.environ.get("PLANWRIGHT_URL", DEFAULT_URL),
        help=f"service URL (default: $PLANWRIGHT_URL or {DEFAULT_URL})",
    )
    chat.add_argument(
        "--token",
        default=os.environ.get("PLANWRIGHT_TOKEN"),
        help="bearer token (default: $PLANWRIGHT_TOKEN; none in single-user mode)",
    )
    chat.set_defaults(run=main)
    return chat


def main(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run_chat(args, sys.stdin, sys.stdout))
    except KeyboardInterrupt:
        print(file=sys.stdout)
        return 130


async def run_chat(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    """Run the interactive client until ``/quit`` or end of input; the exit code."""
    out = Output(stdout)
    lines = LineReader(stdin, asyncio.get_running_loop())
    base_url = args.url.rstrip("/")
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=30) as http:
        rest = Rest(http)
        try:
            workflow_id = await choose_workflow(args, rest, out, lines)
            if workflow_id is None:
                return 0
            session = await rest.call(
                "POST",
                "/v1/sessions",
                json={"workflow_id": workflow_id, "read_only": bool(args.read_only)},
            )
            detail = await rest.call("GET", f"/v1/sessions/{session['id']}")
            client = ChatClient(
                rest=rest,
                out=out,
                lines=lines,
                ws_url=socket_url(base_url, f"/v1/sessions/{session['id']}/ws", args.token),
                session_id=session["id"],
                workflow_id=workflow_id,
                read_only=bool(detail["read_only"]),
                name=detail["workflow"]["name"],
                version=detail["workflow"]["version"],
                yaml=detail["workflow"]["yaml"],
            )
            return await client.run()
        except ChatError as exc:
            out.line(f"error: {exc.message}")
            return exc.code
        finally:
            lines.close()


def socket_url(base_url: str, path: str, token: str | None) -> str:
    parts = urlsplit(base_url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    query = f"token={quote(token, safe='')}" if token else ""
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + path, query, ""))


# --- plumbing ------------------------------------------------------------------------


class LineReader:
    """Lines from a blocking text stream, read on a daemon thread (so a pending read
    never keeps the process alive) and handed to the event loop through a queue."""

    def __init__(self, stream: TextIO, loop: asyncio.AbstractEventLoop) -> None:
        self.stream = stream
        self.interactive = _isatty(stream)
        self._loop = loop
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._closed = False
        self._thread = threading.Thread(target=self._pump, name="chat-stdin", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            while not self._closed:
                line = self.stream.readline()
                self._put(line if line else None)
                if not line:
                    return
        except (OSError, ValueError):
            self._put(None)

    def _put(self, item: str | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is listening
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    async def read(self) -> str | None:
        """The next line without its newline, or None at end of input."""
        line = await self._queue.get()
        if line is None:
            self._queue.put_nowait(None)  # stay at end of input
            return None
        return line.rstrip("\r\n")

    def close(self) -> None:
        self._closed = True


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Output:
    """Writes lines; on a terminal, spinner lines are overwritten when they settle."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = _isatty(stream)
        self.color = self.tty and not os.environ.get("NO_COLOR")
        self._open = False  # the cursor is at the end of an unfinished line

    def paint(self, text: str, style: str) -> str:
        if not self.color:
            return text
        codes = {"dim": "2", "bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
        return f"\x1b[{codes[style]}m{text}\x1b[0m"

    def write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def end_line(self) -> None:
        if self._open:
            self.write("\n")
            self._open = False

    def line(self, text: str = "") -> None:
        self.end_line()
        self.write(text + "\n")

    def lines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    def partial(self, text: str) -> None:
        """Text that the next output continues (streamed answers, prompts)."""
        self.write(text)
        self._open = not text.endswith("\n")

    def echo(self, text: str) -> None:
        self.write(text + "\n")
        self._open = False

    def typed(self) -> None:
        """The user typed a line after a prompt: the cursor is on a fresh line."""
        self._open = False

    def spinner(self, text: str) -> None:
        self.end_line()
        if self.tty:
            self.write(f"  {self.paint('…', 'yellow')} {text}")
            self._open = True
        else:
            self.write(f"  … {text}\n")

    def settled(self, text: str) -> None:
        mark = self.paint("✓", "green")
        if self.tty and self._open:
            self.write(f"\r\x1b[K  {mark} {text}\n")
            self._open = False
        else:
            self.line(f"  {mark} {text}")


class Rest:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ChatError(
                f"cannot reach {self.http.base_url} ({exc.__class__.__name__}): "
                "is `planwright serve` running there?",
                2,
            ) from exc
        if response.status_code == 401:
            raise ChatError(
                "the server needs a valid token: pass --token or set PLANWRIGHT_TOKEN", 2
            )
        if response.is_error:
            try:
                message = response.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = response.text[:200] or response.reason_phrase
            raise ChatError(message, 1)
        return response.json()


async def ask(out: Output, lines: LineReader, prompt: str) -> str | None:
    out.partial(prompt)
    line = await lines.read()
    if line is None:
        out.line()
        return None
    if lines.interactive:
        out.typed()  # the user's Enter ended the line
    else:
        out.echo(line)  # scripted input: echo it so the transcript reads naturally
    return line


async def choose_workflow(
    args: argparse.Namespace, rest: Rest, out: Output, lines: LineReader
) -> str | None:
    if args.workflow:
        found = await rest.call("GET", f"/v1/workflows/{quote(args.workflow, safe='')}")
        return str(found["id"])
    if args.new:
        created = await rest.call("POST", "/v1/workflows", json={"name": args.new})
        out.line(f"Created workflow {created['name']!r} ({created['id']}).")
        return str(created["id"])
    workflows = await rest.call("GET", "/v1/workflows")
    if workflows:
        out.line("Workflows:")
        for number, workflow in enumerate(workflows, 1):
            out.line(
                f"  {number:>2}. {workflow['name']}  (v{workflow['version']}, {workflow['id']})"
            )
    while True:
        prompt = (
            "Open which workflow? A number, or a name for a new one: "
            if workflows
            else "Name for a new workflow: "
        )
        answer = await ask(out, lines, prompt)
        if answer is None:
            return None
        answer = answer.strip()
        if answer.isdigit() and workflows:
            index = int(answer) - 1
            if 0 <= index < len(workflows):
                return str(workflows[index]["id"])
            out.line(f"There is no workflow number {answer}.")
            continue
        created = await rest.call("POST", "/v1/workflows", json={"name": answer or None})
        out.line(f"Created workflow {created['name']!r} ({created['id']}).")
        return str(created["id"])


# --- the tree ------------------------------------------------------------------------


def condition_text(edge: Edge) -> str:
    text = {
        "always": "always",
        "on_job_success": "on success",
        "on_job_failure": "on failure",
    }.get(edge.condition_type)
    if text is None:
        text = f"if {edge.condition_label or edge.condition_expression or '?'}"
    return text if edge.enabled else f"{text} (disabled)"


def adaptor_text(adaptor: str) -> str:
    name = adaptor.removeprefix("@openfn/language-")
    base, _, version = name.rpartition("@") if name.count("@") else (name, "", "")
    return f"{base} {version}" if version and version != "latest" else (base or name)


def has_code(body: str | None) -> bool:
    text = (body or "").strip()
    return bool(text) and text != "// Add operations here"


def render_tree(
    yaml_text: str,
    *,
    changed: set[str] | frozenset[str] = frozenset(),
    paint: Any = None,
) -> list[str]:
    """The workflow as an indented tree: trigger, then each step under the step
    (or trigger) that leads to it, with the edge's condition; ``*`` marks ``changed``
    keys (jobs, triggers or edges)."""
    style = paint or (lambda text, _style: text)
    try:
        structure: Structure = WorkflowDocument.from_yaml(yaml_text).structure
    except Exception as exc:
        return [f"(cannot draw the workflow: {exc})"]
    jobs, triggers = structure.jobs, structure.triggers
    children: dict[str, list[Edge]] = {}
    incoming: dict[str, int] = {}
    for edge in structure.edges.values():
        source = ("trigger:" if edge.source_job is None else "job:") + edge.source
        children.setdefault(source, []).append(edge)
        incoming[edge.target_job] = incoming.get(edge.target_job, 0) + 1

    lines = [style(structure.name or "Untitled workflow", "bold")]
    if not jobs and not triggers:
        return [*lines, "  (no steps yet)"]
    seen: set[str] = set()

    def mark(key: str) -> str:
        return style(" *", "yellow") if key in changed else ""

    def job_label(key: str) -> str:
        job = jobs.get(key)
        if job is None:
            return f"{key} (missing)"
        code = ", has code" if has_code(job.body) else ""
        return f"{job.name} [{adaptor_text(job.adaptor)}{code}]{mark(key)}"

    def walk(source: str, prefix: str) -> None:
        edges = children.get(source, [])
        for index, edge in enumerate(edges):
            last = index == len(edges) - 1
            branch = "└─ " if last else "├─ "
            condition = condition_text(edge)
            if edge.condition_type == "on_job_failure":
                condition = style(condition, "red")
            target = edge.target_job
            edge_mark = style(" *", "yellow") if edge.key in changed else ""
            if target in seen:
                name = jobs[target].name if target in jobs else target
                lines.append(f"{prefix}{branch}{condition}{edge_mark} → ↪ {name} (see above)")
                continue
            seen.add(target)
            lines.append(f"{prefix}{branch}{condition}{edge_mark} → {job_label(target)}")
            walk(f"job:{target}", prefix + ("   " if last else "│  "))

    for key, trigger in triggers.items():
        what = f"cron {trigger.cron_expression}" if trigger.type == "cron" else trigger.type
        state = "enabled" if trigger.enabled else "disabled"
        lines.append(f"⚡ {what} trigger ({state}){mark(key)}")
        walk(f"trigger:{key}", "")
    roots = [key for key in jobs if key not in seen and not incoming.get(key)]
    loose = [key for key in jobs if key not in seen]
    if loose:
        if triggers:
            lines.append(style("not reached from the trigger:", "dim"))
        for key in roots or loose[:1]:
            if key in seen:
                continue
            seen.add(key)
            lines.append(f"• {job_label(key)}")
            walk(f"job:{key}", "  ")
        for key in jobs:  # what is left sits on a cycle
            if key not in seen:
                seen.add(key)
                lines.append(f"• {job_label(key)}")
                walk(f"job:{key}", "  ")
    if changed & (set(jobs) | set(triggers) | set(structure.edges)):
        lines.append(style("(* changed)", "dim"))
    return lines


# --- the client ----------------------------------------------------------------------


@dataclass
class ChatClient:
    rest: Rest
    out: Output
    lines: LineReader
    ws_url: str
    session_id: str
    workflow_id: str
    read_only: bool
    name: str
    version: int
    yaml: str
    ws: ClientConnection | None = None
    turn_events: asyncio.Queue[tuple[str, dict[str, Any]]] = field(default_factory=asyncio.Queue)
    in_turn: bool = False
    streamed: bool = False
    turn_changes: set[str] = field(default_factory=set)
    turn_start_version: int = 0
    quitting: bool = False
    fatal: str | None = None

    async def run(self) -> int:
        mode = "read-only session: questions only" if self.read_only else "editing session"
        self.out.line(f"Workflow {self.name!r} v{self.version} · {mode}")
        self.print_tree(set())
        self.out.line(self.out.paint("Type /help for commands, /quit to leave.", "dim"))
        await self.connect()
        receiver = asyncio.create_task(self.receive())
        try:
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

    async def turn(self, text: str) -> None:
        if self.ws is None:
            self.out.line("Not connected; try again in a moment.")
            return
        frame = {"type": "turn", "content": text, "context": {"page": "workflow"}}
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
            if kind == "confirm":
                approved = await self.confirm(frame)
                if approved is None:
                    return
                self.in_turn = True
                continue
            return

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
                message = "another turn is running on this workflow; try again when it finishes"
            self.out.line(self.out.paint(f"! {code}: {message}", "red"))
            if self.in_turn or code in ("busy", "no_pending_confirmation"):
                self.in_turn = False
                self.turn_events.put_nowait(("error", frame))

    def on_workflow(self, frame: dict[str, Any]) -> None:
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


def changed_keys(before: str, after: str) -> set[str]:
    """Keys of jobs, triggers and edges that are new or different in ``after``."""
    try:
        old = WorkflowDocument.from_yaml(before).structure if before.strip() else Structure()
        new = WorkflowDocument.from_yaml(after).structure
    except Exception:
        return set()
    keys: set[str] = set()
    for section in ("jobs", "triggers", "edges"):
        previous = old.section(section)
        for key, entry in new.section(section).items():
            if previous.get(key) != entry:
                keys.add(key)
    return keys


if __name__ == "__main__":  # python -m app.chat_cli [--workflow ID | --new NAME] ...
    _parser = argparse.ArgumentParser(prog="planwright")
    register(_parser.add_subparsers(dest="command", required=True))
    _args = _parser.parse_args(["chat", *sys.argv[1:]])
    raise SystemExit(_args.run(_args))
