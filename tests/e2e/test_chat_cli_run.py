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
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.server import EDITOR, TOKENS, LiveServer
from tests.e2e.test_chat_cli import ROOT, _read_until

REFERRALS = "https://clinic.example.org/referrals/"
BRANCHING = """\
name: Referral triage
jobs:
  fetch:
    name: Fetch referral
    adaptor: '@openfn/language-http@latest'
    body: |
      get('https://clinic.example.org/referrals/1');
  old:
    name: Older patient
    adaptor: '@openfn/language-common@latest'
    body: |
      fn(state => ({ ...state, data: { ...state.data, route: 'old' } }));
  young:
    name: Younger patient
    adaptor: '@openfn/language-common@latest'
    body: |
      fn(state => ({ ...state, data: { ...state.data, route: 'young' } }));
triggers:
  webhook:
    type: webhook
    enabled: true
edges:
  webhook->fetch:
    source_trigger: webhook
    target_job: fetch
    condition_type: always
    enabled: true
  fetch->old:
    source_job: fetch
    target_job: old
    condition_type: js_expression
    condition_expression: state.data.age >= 65
    enabled: true
  fetch->young:
    source_job: fetch
    target_job: young
    condition_type: js_expression
    condition_expression: state.data.age < 65
    enabled: true
"""


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
        _read_until(main_fd, "you> ", seen)
        os.write(main_fd, f"/run @{bad}\n".encode())
        refused = _read_until(main_fd, "is not valid JSON", seen)
        os.write(main_fd, f"/run @{sample} @{responses}\n".encode())
        passed = _read_until(main_fd, "Test run of v1: succeeded", seen, timeout=60)
        os.write(main_fd, f"/run @{sample}\n".encode())  # no sample response this time
        failed = _read_until(main_fd, "Test run of v1: failed", seen, timeout=60)
        failed = _read_until(main_fd, "/fix hands the failure", seen)
        os.write(main_fd, b"/fix\n")
        fixed = _read_until(main_fd, "Sending the failed run at Fetch referral", seen)
        fixed = _read_until(main_fd, "planner> ", seen, timeout=60)
        os.write(main_fd, b"/quit\n")
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main_fd)
    assert f"{bad} is not valid JSON" in refused
    # Progress settles in place on a terminal: the spinner line is overwritten.
    assert "\r\x1b[K  ✓ Fetch referral (fetch) ran" in passed
    succeeded = "".join(seen).split(f"/run @{sample} @{responses}", 1)[1].split("you> ")[0]
    assert re.search(r"✓ Fetch referral \(fetch\)\s+succeeded", succeeded), succeeded
    assert re.search(r"✓ Older patient \(old\)\s+succeeded", succeeded), succeeded
    assert "Younger patient" not in succeeded  # the other branch did not run
    second = failed.split(f"/run @{sample}\r\n", 1)[1]
    assert "✗ Fetch referral (fetch)" in second
    assert "Requests no sample response answered (the step got an error):" in second
    assert f"GET {REFERRALS}1  (Fetch referral)" in second
    assert "Older patient (old)" not in second.split("Test run of v1: failed", 1)[1]
    assert "planner> " in fixed

    runs = server.request("GET", f"/v1/workflows/{created['id']}/runs", EDITOR)["runs"]
    assert [r["status"] for r in runs] == ["failed", "succeeded"]  # the bad file sent nothing
    assert runs[1]["steps"][-1]["key"] == "old"
