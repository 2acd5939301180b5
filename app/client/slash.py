"""The slash commands of a chat session: ``/help`` and the dispatch of every command,
with the workflow's own here (``/yaml``, ``/tree``, ``/versions``, ``/revert N``); plan
mode's, review mode's and the test runs' are handed to their parts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from app.client import plan, review
from app.client.rest import ChatError
from app.client.state import SessionState
from app.client.terminal import read_block
from app.client.tree import changed_keys

HELP = """\
Say what you want in plain English, e.g. "add a step called Dedupe with common after Fetch".
Commands:
  /plan TEXT   send TEXT as a plan-mode turn (propose workflows for review); /plan alone
               reads a pasted spec until a line with just "." (or, right after a reply
               that offered plan mode, sends that message again); /plan @FILE sends a file
  /paste       send the lines pasted or typed up to one with just "." as one message
               (on a terminal a pasted block is one message anyway; press Enter)
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


class SlashCommands(SessionState):
    """A line starting with ``/``; mixed into the ChatClient, which provides these:"""

    turn: Callable[..., Awaitable[None]]
    test_run: Callable[[str], Awaitable[None]]
    fix: Callable[[], Awaitable[None]]
    errors: Callable[[str], Awaitable[None]]
    review_again: Callable[[], Awaitable[None]]

    async def command(self, text: str) -> str | None:
        name, _, rest = text.partition(" ")
        name = name.lower()
        try:
            if name in ("/quit", "/exit", "/q"):
                return "quit"
            if name == "/help":
                self.out.lines(HELP.splitlines())
            elif name == "/plan":
                offered = None if rest.strip() else self.offered_plan
                spec = offered or await plan.read_spec(self.out, self.lines, rest.strip())
                if spec is not None:
                    await self.turn(spec, mode="plan")
            elif name == "/paste":
                self.out.line('Paste the message, then a line with just "." to send it.')
                pasted = (rest.strip() + "\n" if rest.strip() else "") + await read_block(
                    self.out, self.lines
                )
                if pasted.strip():
                    await self.turn(pasted.strip())
                else:
                    self.out.line("Nothing to send.")
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
