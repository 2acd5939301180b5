"""One chat session: the prompt loop, slash commands, turns over the WebSocket
(with confirmations, plan reviews and review-mode proposals), test runs and fixing a
failed one, and the frames the server sends (status lines, streamed answers, workflow
changes made here or elsewhere, plan and run progress), reconnecting when the
connection drops.

:class:`ChatClient` opens the session and runs the ``you>`` loop; its parts are
mixins over :class:`~app.client.state.SessionState`: ``slash`` (the commands),
``run_commands`` (``/run``, ``/fix``, ``/errors``), ``turns`` (a turn and what it asks
on the way) and ``frames`` (what the server sends, reconnecting).

A session is on one workflow, or on a project (``workflow_id`` None: a project
session, whose turns plan the project's workflows; DESIGN §5a)."""

from __future__ import annotations

import asyncio
import contextlib

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus, InvalidURI

from app.client import plan, review
from app.client.frames import Frames
from app.client.rest import ChatError
from app.client.run_commands import RunCommands
from app.client.slash import SlashCommands
from app.client.terminal import BRACKETED_PASTE_OFF, BRACKETED_PASTE_ON, unechoed_paste_marks
from app.client.turns import Turns


class ChatClient(Turns, RunCommands, Frames, SlashCommands):
    """One session at the terminal (its fields: :class:`~app.client.state.SessionState`).
    The parts that define a method come before those that only declare it."""

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
        # On a terminal, a pasted block arrives marked, and is one turn (terminal.py).
        if not (self.lines.interactive and self.out.tty):
            return await self._session()
        self.out.write(BRACKETED_PASTE_ON)
        try:
            with unechoed_paste_marks(self.lines.stream):
                return await self._session()
        finally:
            self.out.write(BRACKETED_PASTE_OFF)

    async def _session(self) -> int:
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
