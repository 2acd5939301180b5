"""Plan mode in the terminal client against the real server (offline model): a
project session proposes from the four-process spec, takes feedback, and builds."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from app import client
from tests.e2e.helpers import SPEC, after, parse, run_own_loop
from tests.e2e.server import EDITOR, TOKENS, LiveServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(tmp_path_factory.mktemp("cli-plan-server"), tokens=TOKENS) as live:
        yield live


def test_a_project_session_plans_takes_feedback_and_builds(
    server: LiveServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    spec = tmp_path_factory.mktemp("spec") / "four_processes.md"
    spec.write_text(SPEC, encoding="utf-8")
    project = server.request("POST", "/v1/projects", EDITOR, json={"name": "Referrals"})
    lines = [
        f"/plan @{spec}",
        "d",
        "rename Coverage check to Eligibility check",
        "a",
        "/project",
        "/quit",
    ]
    args = parse("--url", server.url, "--token", EDITOR, "--project", project["id"])
    stdout = io.StringIO()
    stdin = io.StringIO("".join(line + "\n" for line in lines))
    code = run_own_loop(client.run_chat(args, stdin, stdout), timeout=180)
    transcript = stdout.getvalue()
    assert code == 0, transcript
    assert transcript.startswith("Project 'Referrals' · planning session\n"), transcript
    first = after(transcript, "Proposed plan, revision 1: 4 workflows")
    assert "Coverage check [" in first.split("Proposed plan, revision 2", 1)[0]
    revised = after(first, "Proposed plan, revision 2: 4 workflows")
    assert "Eligibility check [" in revised.split("? ", 1)[0]
    built = after(revised, "Approved: building the workflows…")
    assert built.count("  ✓ Built ") == 4, built
    assert "Could not build" not in built
    listing = after(built, "you> /project")
    assert "Built: 4 workflows." in listing
    stored = server.request("GET", f"/v1/projects/{project['id']}", EDITOR)
    assert len(stored["workflows"]) == 4
    assert stored["plan"]["status"] == "built"
