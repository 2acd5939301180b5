"""The test-run commands of a chat session (DESIGN §5c): ``/run`` (the ``run`` frame,
its progress and the finished run), ``/fix`` (the last failed run as an errors-mode
turn) and ``/errors`` (a file or pasted lines as one). What they send and show is
:mod:`app.client.runs`'."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.exceptions import ConnectionClosed

from app.client import runs
from app.client.state import SessionState

FRAME_LIMIT = 60_000
"""Bytes of a ``run`` frame sent over the socket (the server's default frame limit is
64 KiB, and a bigger frame closes the socket); a bigger run goes over REST."""


class RunCommands(SessionState):
    """``/run``, ``/fix`` and ``/errors``; mixed into the ChatClient, which provides these:"""

    turn: Callable[..., Awaitable[None]]

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
