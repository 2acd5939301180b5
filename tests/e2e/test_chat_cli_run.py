"""Test runs from the terminal client against the real server and the real runner
(OpenFn's pinned runtime and adaptors in node, installed by ``make test``), in a real
pseudo-terminal: ``/run @input.json @responses.json`` streams progress and shows the
result; a run without a sample response fails and lists the request; ``/fix`` hands
it to the planner; a bad file sends nothing."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.helpers import ROOT, read_until
from tests.e2e.server import EDITOR, TOKENS, LiveServer
from tests.fixtures import fixture_text

REFERRALS = "https://clinic.example.org/referrals/"
# Fetch a referral, then the older or the younger patient's step by a js condition.
BRANCHING = fixture_text("referral_triage.yaml")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(tmp_path_factory.mktemp("cli-run-server"), tokens=TOKENS) as live:
        yield live


def test_run_and_fix_in_a_real_terminal(server: LiveServer, tmp_path: Path) -> None:
    created = server.create_workflow(EDITOR, yaml=BRANCHING)
    sample = tmp_path / "sample.json"
    sample.write_text(json.dumps({"data": {"referral": 1}}), "utf-8")
    responses = tmp_path / "responses.json"
    responses.write_text(
        json.dumps([{"method": "GET", "url": REFERRALS + "*", "body": {"age": 70}}]), "utf-8"
    )
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", "utf-8")

    main_fd, child_fd = pty.openpty()
    env = {**os.environ, "PLANWRIGHT_TOKEN": EDITOR, "TERM": "xterm", "NO_COLOR": "1"}
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
        prompts = 1
        read_until(main_fd, "you> ", seen)

        def command(line: str, until: str, timeout: float = 60) -> str:
            """Type ``line`` at the prompt; what it printed up to the next prompt (which
            must hold ``until``). Waiting for that prompt keeps typing and output apart."""
            nonlocal prompts
            os.write(main_fd, (line + "\n").encode())
            prompts += 1
            deadline = time.monotonic() + timeout
            while "".join(seen).count("you> ") < prompts:
                assert time.monotonic() < deadline, "".join(seen)
                ready, _, _ = select.select([main_fd], [], [], 0.2)
                if ready:
                    seen.append(os.read(main_fd, 65536).decode("utf-8", errors="replace"))
            printed = "".join(seen).rsplit(line, 1)[1].split("you> ", 1)[0]
            assert until in printed, printed
            return printed

        refused = command(f"/run @{bad}", "is not valid JSON")
        passed = command(f"/run @{sample} @{responses}", "Test run of v1: succeeded")
        failed = command(f"/run @{sample}", "Test run of v1: failed")  # no sample response
        fixed = command("/fix", "planner> ")
        os.write(main_fd, b"/quit\n")
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main_fd)
    assert f"{bad} is not valid JSON" in refused
    # Progress settles in place on a terminal: the spinner line is overwritten.
    assert "\r\x1b[K  ✓ Fetch referral (fetch) ran" in passed
    assert re.search(r"✓ Fetch referral \(fetch\)\s+succeeded", passed), passed
    assert re.search(r"✓ Older patient \(old\)\s+succeeded", passed), passed
    assert "Younger patient" not in passed  # the other branch did not run
    second = failed
    assert "✗ Fetch referral (fetch)" in second
    assert "Requests no sample response answered (the step got an error):" in second
    assert f"GET {REFERRALS}1  (Fetch referral)" in second
    assert "Older patient (old)" not in second.split("Test run of v1: failed", 1)[1]
    assert "Sending the failed run at Fetch referral to the planner…" in fixed
    assert "Nothing to fix" not in fixed

    runs = server.request("GET", f"/v1/workflows/{created['id']}/runs", EDITOR)["runs"]
    assert [r["status"] for r in runs] == ["failed", "succeeded"]  # the bad file sent nothing
    assert runs[1]["steps"][-1]["key"] == "old"
