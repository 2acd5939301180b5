"""The terminal client against the real server (offline model): driven on its own
event loop with scripted stdin and captured stdout, and once through a real
pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from app import client
from tests.e2e.helpers import (
    CODED_DOC,
    CREATE,
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
from tests.e2e.server import EDITOR, REVIEWER, TOKENS, LiveServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(tmp_path_factory.mktemp("cli-server"), tokens=TOKENS) as live:
        yield live


def test_chat_builds_edits_lists_and_reverts_a_workflow(server: LiveServer) -> None:
    out = chat(
        server,
        "--new",
        "Referral intake",
        lines=[
            CREATE,
            "add a step called Dedupe with common after Get referrals",
            "what does this workflow do",
            "/versions",
            "/revert 2",
            "/yaml",
            "/nonsense",
            "/quit",
        ],
    )
    assert "Created workflow 'Referral intake'" in out
    assert "editing session" in out
    created = after(out, f"you> {CREATE}")
    # status lines, spinner then settled
    assert "  … Building the workflow…" in created
    assert "  ✓ Created workflow 'Referral intake' with 3 steps" in created
    assert "planner> Created the workflow" in created
    # the tree after the change: trigger, then steps indented by edge, conditions shown
    tree = after(created, "── workflow now at v2 ──")
    assert "⚡ webhook trigger (disabled) *" in tree
    assert f"└─ always * → Get referrals [{TREE['http']}] *" in tree
    assert f"   └─ on success * → Check coverage [{TREE['fhir']}] *" in tree
    assert f"      └─ on success * → Email coordinator [{TREE['gmail']}] *" in tree

    added = after(out, "you> add a step called Dedupe")
    assert "  ✓ Added 1 step: Dedupe (dedupe, common)." in added
    tree = after(added, "── workflow now at v5 ──")
    assert f"└─ always → Get referrals [{TREE['http']}]\n" in tree  # untouched: no mark
    assert f"   └─ on success * → Dedupe [{TREE['common']}] *" in tree
    assert f"      └─ on success * → Check coverage [{TREE['fhir']}]\n" in tree

    answer = after(out, "you> what does this workflow do")
    assert '"Referral intake" has 4 step(s)' in answer.split("you>")[0]
    assert "── workflow now" not in answer.split("you>")[0]  # a question changes nothing

    versions = after(out, "you> /versions").split("you>")[0]
    assert re.search(r"v5\s+add_edges\s+editor-[0-9a-f]{12}.*\(current\)", versions)
    assert re.search(r"v1\s+create", versions)

    reverted = after(out, "you> /revert 2").split("you>")[0]
    assert "Reverted to v2; saved as v6." in reverted
    assert "Dedupe" not in reverted
    assert f"   └─ on success * → Check coverage [{TREE['fhir']}]" in reverted

    yaml = after(out, "you> /yaml").split("you>")[0]
    assert "name: Referral intake" in yaml and "dedupe" not in yaml
    assert "Unknown command /nonsense; /help lists them." in out


def test_confirmation_prompts_approve_and_decline(server: LiveServer) -> None:
    created = server.create_workflow(EDITOR, yaml=CODED_DOC)
    declined = chat(
        server,
        "--workflow",
        created["id"],
        lines=["remove Check coverage", "maybe", "n", "/tree", "/quit"],
    )
    assert "? The assistant wants to remove 'Check coverage', which holds code." in declined
    assert "  Please answer y or n." in declined
    assert "  Cancelled." in declined
    assert "on success → Check coverage [fhir, has code]" in after(declined, "you> /tree")
    current = server.request("GET", f"/v1/workflows/{created['id']}", EDITOR)
    assert "name: Check coverage" in current["yaml"]  # declined: the step and its code stay

    fresh = server.create_workflow(EDITOR, yaml=CODED_DOC)
    approved = chat(
        server,
        "--workflow",
        fresh["id"],
        lines=["remove Check coverage", "y", "/quit"],
    )
    assert "  Approved." in approved
    result = after(approved, "  Approved.")
    assert "  ✓ Removed Check coverage (check)." in result
    tree = after(result, "── workflow now at v3 ──")
    assert "Check coverage" not in tree
    assert "   └─ on success * → Alert staff [gmail]" in tree


def test_read_only_and_reviewer_sessions_answer_but_never_change(server: LiveServer) -> None:
    created = server.create_workflow(EDITOR, yaml=CODED_DOC)
    out = chat(
        server,
        "--workflow",
        created["id"],
        lines=[
            "remove Check coverage",
            "what happens when the coverage check fails?",
            "/revert 1",
            "/quit",
        ],
        token=REVIEWER,  # asks for editing; the server makes it read-only
    )
    assert "read-only session: questions only" in out
    assert "read-only, so I can't change the workflow" in out
    assert 'If "Check coverage" fails: "Alert staff" (on failure).' in out
    assert "This is a read-only session: it cannot revert." in out
    assert "? The assistant" not in out
    assert server.request("GET", f"/v1/workflows/{created['id']}", EDITOR)["version"] == 1

    editor_read_only = chat(
        server, "--workflow", created["id"], "--read-only", lines=["remove Check coverage"]
    )
    assert "read-only session: questions only" in editor_read_only
    assert "can't change the workflow" in editor_read_only


def test_choosing_a_workflow_from_the_list(server: LiveServer) -> None:
    created = server.create_workflow(EDITOR, name="Pick me")
    workflows = server.request("GET", "/v1/workflows", EDITOR)
    number = next(i for i, w in enumerate(workflows, 1) if w["id"] == created["id"])
    out = chat(server, lines=["42424", str(number), "/quit"])
    assert "Workflows:" in out
    assert "There is no workflow number 42424." in out
    assert "Workflow 'Pick me' v1 · editing session" in out


def test_changes_made_elsewhere_show_up_while_waiting_for_input(server: LiveServer) -> None:
    created = server.create_workflow(EDITOR, yaml=CODED_DOC)
    args = parse("--url", server.url, "--token", EDITOR, "--workflow", created["id"])
    stdin, stdout = LiveInput(), io.StringIO()
    result: list[int] = []
    runner = threading.Thread(
        target=lambda: result.append(run_own_loop(client.run_chat(args, stdin, stdout)))  # type: ignore[arg-type]
    )
    runner.start()
    try:
        wait_for(stdout, "you> ")
        server.request(
            "PUT",
            f"/v1/workflows/{created['id']}",
            EDITOR,
            json={
                "yaml": server.request("GET", f"/v1/workflows/{created['id']}", EDITOR)[
                    "yaml"
                ].replace("name: Alert staff", "name: Page the on-call"),
                "expected_version": 1,
            },
        )
        screen = wait_for(stdout, "(* changed)")
    finally:
        stdin.type("/quit")
        runner.join(20)
    assert result == [0]
    assert "── changed elsewhere: now v2" in screen
    assert "      └─ on failure → Page the on-call [gmail] *" in screen


def test_errors_end_the_client_with_a_message(server: LiveServer) -> None:
    args = parse("--url", server.url, "--token", "wrong-token", "--new", "x")
    stdout = io.StringIO()
    assert run_own_loop(client.run_chat(args, io.StringIO(""), stdout)) == 2
    assert "needs a valid token" in stdout.getvalue()

    args = parse("--url", server.url, "--token", EDITOR, "--workflow", "no-such-workflow")
    stdout = io.StringIO()
    assert run_own_loop(client.run_chat(args, io.StringIO(""), stdout)) == 1
    assert "There is no workflow 'no-such-workflow'" in stdout.getvalue()

    args = parse("--url", "http://127.0.0.1:9", "--new", "x")
    stdout = io.StringIO()
    assert run_own_loop(client.run_chat(args, io.StringIO(""), stdout)) == 2
    assert "cannot reach http://127.0.0.1:9" in stdout.getvalue()


def test_in_a_real_terminal(server: LiveServer) -> None:
    """The client as a person runs it: a pseudo-terminal, colours and in-place status."""
    created = server.create_workflow(EDITOR, name="Terminal")
    main_fd, child_fd = pty.openpty()
    env = {**os.environ, "PLANWRIGHT_TOKEN": EDITOR, "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "app.client", "--url", server.url, "--workflow", created["id"]],
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
        os.write(main_fd, (CREATE + "\n").encode())
        screen = read_until(main_fd, "── workflow now at v2 ──", seen)
        read_until(main_fd, "(* changed)", seen)
        os.write(main_fd, b"/quit\n")
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main_fd)
    assert "\x1b[" in screen  # colours on a terminal
    assert "\r\x1b[K  \x1b[32m✓\x1b[0m Created workflow 'Terminal'" in screen  # spinner replaced


SOP = [
    "Referral intake SOP:",
    "1. Fetch new referrals from the clinic portal with http",
    "2. Check each patient's coverage in the FHIR server",
    "3. Email the coordinator with gmail",
]


def test_a_pasted_sop_in_a_real_terminal_is_one_turn(server: LiveServer) -> None:
    """A numbered SOP pasted at the prompt (the terminal brackets it) is one turn, as on
    the web page: one new version, every step of it, and no line refused on its own."""
    created = server.create_workflow(EDITOR, name="Pasted")
    main_fd, child_fd = pty.openpty()
    env = {**os.environ, "PLANWRIGHT_TOKEN": EDITOR, "TERM": "xterm"}
    process = subprocess.Popen(
        [sys.executable, "-m", "app.client", "--url", server.url, "--workflow", created["id"]],
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
        screen = read_until(main_fd, "you> ", seen)
        assert "\x1b[?2004h" in screen  # the client asked the terminal to bracket pastes
        # What a terminal sends for a paste that ends in a line break, then the Enter.
        os.write(main_fd, ("\x1b[200~" + "\n".join(SOP) + "\n\x1b[201~\n").encode())
        screen = read_until(main_fd, "── workflow now at v2 ──", seen)
        read_until(main_fd, "(* changed)", seen)
        os.write(main_fd, b"/quit\n")
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main_fd)
    assert "^[[200~" not in "".join(seen)  # the marks are not echoed as text
    workflow = server.request("GET", f"/v1/workflows/{created['id']}", EDITOR)
    assert workflow["version"] == 2  # one turn made one version
    assert "workflow now at v3" not in "".join(seen)
    for step in ("referral", "coverage", "coordinator"):
        assert step in workflow["yaml"].lower()


def test_paste_sends_the_lines_up_to_a_dot_as_one_turn(server: LiveServer) -> None:
    created = server.create_workflow(EDITOR, name="Pasted by dot")
    transcript = chat(server, "--workflow", created["id"], lines=["/paste", *SOP, ".", "/quit"])
    assert 'a line with just "." to send it' in transcript
    assert "── workflow now at v2 ──" in transcript and "now at v3" not in transcript
    workflow = server.request("GET", f"/v1/workflows/{created['id']}", EDITOR)
    assert workflow["version"] == 2
