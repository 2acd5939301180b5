"""Review mode in the terminal client against the real server (offline model, DESIGN
§5c): a ``--review`` session's turn ends in a proposal that commits nothing until it is
answered; accept some, a dependent answer asked again, reject, a stale proposal, a
restart with the proposal open (the socket reconnects; ``--session`` comes back to it);
and the prompt once in a real pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from app import client
from app.client import review
from tests.documents import CODED_REFERRAL_DOC
from tests.e2e.helpers import (
    ROOT,
    TREE,
    LiveInput,
    after,
    chat,
    parse,
    read_until,
    run_own_loop,
    wait_for,
)
from tests.e2e.server import EDITOR, TOKENS, LiveServer

# The offline planner makes three tool calls for it: c1 adds the step, c2 points Fetch
# referral's edge at it (Check coverage and Alert staff stop running until c3), c3
# connects it on to Check coverage. c2 and c3 need c1.
ADD_DEDUPE = "add a step called Dedupe with common after Fetch referral"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(tmp_path_factory.mktemp("cli-review-server"), tokens=TOKENS) as live:
        yield live


def head(server: LiveServer, workflow_id: str) -> dict[str, Any]:
    found: dict[str, Any] = server.request("GET", f"/v1/workflows/{workflow_id}", EDITOR)
    return found


class Live:
    """The client on its own thread with a stdin the test types into."""

    def __init__(self, server: LiveServer, *argv: str) -> None:
        args = parse("--url", server.url, "--token", EDITOR, *argv)
        self.stdin, self.stdout = LiveInput(), io.StringIO()
        self.result: list[int] = []
        self.thread = threading.Thread(
            target=lambda: self.result.append(
                run_own_loop(client.run_chat(args, self.stdin, self.stdout), timeout=120)  # type: ignore[arg-type]
            )
        )
        self.thread.start()

    def type(self, line: str) -> None:
        self.stdin.type(line)

    def wait(self, text: str, timeout: float = 30) -> str:
        return wait_for(self.stdout, text, timeout)

    @property
    def transcript(self) -> str:
        return self.stdout.getvalue()

    def quit(self) -> str:
        self.type("/quit")
        self.thread.join(30)
        assert self.result == [0], self.transcript
        return self.transcript


def test_nothing_is_committed_until_the_chosen_changes_are_accepted(server: LiveServer) -> None:
    created = server.create_workflow(EDITOR, yaml=CODED_REFERRAL_DOC)
    watcher = Live(server, "--workflow", created["id"])  # another terminal on the workflow
    watcher.wait("you> ")
    live = Live(server, "--workflow", created["id"], "--review")
    try:
        live.wait("you> ")
        live.type(ADD_DEDUPE)
        shown = live.wait(review.PROMPT)
        assert head(server, created["id"])["version"] == 1  # a proposal, nothing committed
        live.type("c2")  # needs c1, which it leaves out
        live.wait("  Choose again: the proposal is still open.")
        assert head(server, created["id"])["version"] == 1
        live.type("c1")
        live.wait("── workflow now at v2 ──")
        live.wait("(* changed)")
        watched = watcher.wait("(* changed)")
    finally:
        transcript = live.quit()
        watcher.quit()
    # The watcher saw one change, the accepted version, and nothing of the draft before.
    assert watched.count("── changed elsewhere") == 1
    assert "── changed elsewhere: now v2" in watched
    proposal = after(shown, f"you> {ADD_DEDUPE}")
    assert "editing session · review mode: changes wait for your review" in transcript
    assert "Proposed changes on v1: 3 changes" in proposal
    assert "  c1  Added 1 step: Dedupe (dedupe, common).  [add_jobs]" in proposal
    # c2's impact names both steps that would stop running, by name.
    assert re.search(
        r"c2  .*\n\s+⚠ impact: 'Check coverage' and 1 more step would no longer "
        r"run: 'Alert staff'",
        proposal,
    ), proposal
    assert "    +  dedupe:" in proposal  # the diff
    assert "? Apply these 3 changes?" in proposal
    dependent = after(transcript, "  Accepting c2: applying…\n")
    assert dependent.startswith("! dependent_change: Change c2")
    assert "Not applied: a change you accepted needs one you left out; nothing was saved." in (
        dependent
    )
    applied = after(dependent, "  Accepting c1: applying…\n")
    assert "   └─ on success → Check coverage [fhir, has code]" in applied  # edges untouched
    assert f"• Dedupe [{TREE['common']}] *" in applied  # the new step, not yet connected
    current = head(server, created["id"])
    assert current["version"] == 2  # one version for the accepted change
    assert "dedupe:" in current["yaml"] and "fetch->dedupe" not in current["yaml"]


def test_a_rejected_proposal_and_a_stale_one_commit_nothing(server: LiveServer) -> None:
    created = server.create_workflow(EDITOR, yaml=CODED_REFERRAL_DOC)
    rejected = chat(server, "--workflow", created["id"], "--review", lines=[ADD_DEDUPE, "r"])
    assert "  Rejected: nothing changes." in rejected
    assert "workflow now at" not in rejected
    assert "A proposal is still open" not in rejected
    assert head(server, created["id"])["version"] == 1

    live = Live(server, "--workflow", created["id"], "--review")
    try:
        live.wait("you> ")
        live.type(ADD_DEDUPE)
        live.wait(review.PROMPT)
        # Another editor removes the edge the proposal re-points, and saves a version.
        current = head(server, created["id"])
        moved = re.sub(r"  fetch->check:\n(    .*\n)+", "", current["yaml"])
        assert moved != current["yaml"]
        server.request(
            "PUT",
            f"/v1/workflows/{created['id']}",
            EDITOR,
            json={"yaml": moved, "expected_version": 1},
        )
        live.wait("── changed elsewhere: now v2")
        live.type("a")
        live.wait("! stale_proposal:")
        live.wait("you> ", timeout=10)
        live.type("/diff")
        live.wait("No proposal is open")
    finally:
        transcript = live.quit()
    stale = after(transcript, "  Accepted all: applying…\n")
    assert "nothing was saved and the proposal is closed. Ask again for a new one." in stale
    assert "workflow now at" not in stale
    assert head(server, created["id"])["version"] == 2  # only the other editor's version


def test_a_proposal_open_across_a_restart_is_answered_after_reconnecting_and_later(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with LiveServer(tmp_path_factory.mktemp("cli-review-restart"), tokens=TOKENS) as server:
        created = server.create_workflow(EDITOR, yaml=CODED_REFERRAL_DOC)
        live = Live(server, "--workflow", created["id"], "--review")
        try:
            live.wait("you> ")
            live.type(ADD_DEDUPE)
            live.wait(review.PROMPT)
            server.stop()
            live.wait("Connection lost; reconnecting…")
            server.start()
            live.wait("Reconnected.", timeout=40)
            live.type("a")  # the prompt that was showing answers over the new socket
            live.wait("── workflow now at v2 ──")
        finally:
            transcript = live.quit()
        assert "  Accepted all: applying…" in after(transcript, "Reconnected.")
        assert "fetch->dedupe" in head(server, created["id"])["yaml"]

        # A proposal left open (the client ended without an answer) outlives a restart,
        # and --session comes back to it.
        left = chat(server, "--workflow", created["id"], "--review", lines=["remove Dedupe"])
        found = re.search(r"`planwright chat --session (\S+)` comes back to it\.", left)
        assert found, left
        server.stop()
        server.start()
        assert head(server, created["id"])["version"] == 2
        back = chat(server, "--session", found.group(1), lines=["a"])
    assert back.index("A proposal is waiting for review:") < back.index("you> ")
    assert "  c1  Removed Dedupe (dedupe)." in back
    assert "── workflow now at v3 ──" in back


def test_the_review_prompt_in_a_real_terminal(server: LiveServer) -> None:
    created = server.create_workflow(EDITOR, yaml=CODED_REFERRAL_DOC)
    main_fd, child_fd = pty.openpty()
    env = {**os.environ, "PLANWRIGHT_TOKEN": EDITOR, "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    command = [sys.executable, "-m", "app.client", "--url", server.url]
    process = subprocess.Popen(
        [*command, "--workflow", created["id"], "--review"],
        stdin=child_fd,
        stdout=child_fd,
        stderr=child_fd,
        cwd=ROOT,
        env=env,
        close_fds=True,
    )
    os.close(child_fd)
    seen: list[str] = []
    try:
        read_until(main_fd, "you> ", seen)
        os.write(main_fd, (ADD_DEDUPE + "\n").encode())
        screen = read_until(main_fd, "the ids to accept", seen)
        read_until(main_fd, "diff: ", seen)
        assert head(server, created["id"])["version"] == 1
        os.write(main_fd, b"/diff\n")
        read_until(main_fd, "dedupe->check:", seen)
        os.write(main_fd, b"c1 C2, c3\n")
        done = read_until(main_fd, "(* changed)", seen)
        os.write(main_fd, b"/quit\n")
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main_fd)
    assert "\x1b[31m⚠ impact: 'Check coverage' and 1 more step would no longer run" in screen
    assert "\x1b[32m+  dedupe:\x1b[0m" in screen  # diff lines coloured
    assert "Accepted all: applying…" in done  # the ids named every change
    assert "── workflow now at v2 ──" in done
    assert head(server, created["id"])["version"] == 2
