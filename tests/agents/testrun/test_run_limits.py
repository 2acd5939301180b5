"""The runner's time, memory and output limits, on the real node process."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from agents.testrun import LocalRunner, RunLimits
from tests.agents.testrun.workflow import Job, workflow
from tools.testrun import RunRequest


def _gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_an_endless_loop_times_out_quickly_and_leaves_no_process(
    runtime_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[asyncio.subprocess.Process] = []
    real = asyncio.create_subprocess_exec

    async def spy(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        proc = await real(*args, **kwargs)
        if "run.mjs" in args:
            started.append(proc)
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spy)
    doc = workflow([Job("spin", "fn(s => { while (true) {} });"), Job("after", "fn(s => s);")])
    begin = time.monotonic()  # 5 s: node reaches the step in ~0.1-1 s, more on a busy machine
    run = await LocalRunner(RunLimits(timeout_s=20), runtime_dir).run(
        doc, RunRequest(timeout_s=5.0), run_id="loop"
    )
    elapsed = time.monotonic() - begin

    assert run.status == "timed_out"
    assert 5.0 <= elapsed < 8.0  # node is killed at the limit, not later
    assert run.error == "The run took longer than 5 s and was stopped."
    assert [(s.key, s.status, s.error) for s in run.steps] == [
        ("spin", "failed", "stopped: the run took longer than 5 s")
    ]
    (proc,) = started
    assert proc.returncode is not None  # reaped
    assert _gone(proc.pid)  # its process group (start_new_session) is empty too


async def test_a_step_past_step_bytes_is_cut_and_says_so(runtime_dir: Path) -> None:
    doc = workflow(
        [
            Job(
                "noisy",
                "fn(s => { for (let i = 0; i < 100; i++)"
                " console.log('line ' + i + ' ' + 'x'.repeat(90));"
                " s.data.big = 'y'.repeat(5000); return s; });",
            ),
            Job("small", "fn(s => ({ data: { kept: 'small' } }));"),
        ]
    )
    runner = LocalRunner(RunLimits(step_bytes=2000), runtime_dir)
    run = await runner.run(doc, RunRequest(), run_id="step-bytes")

    assert run.status == "succeeded", run.summary
    noisy, small = run.steps
    assert noisy.truncated is True
    assert sum(len(line.encode()) for line in noisy.logs) <= 2000 + len("…".encode())
    assert noisy.logs[0].startswith("line 0 ") and len(noisy.logs) < 100
    assert isinstance(noisy.output, str) and noisy.output.startswith('{"data":{"big":"yyy')
    assert noisy.output.endswith("…") and len(noisy.output.encode()) <= 2000 + 3
    # The next step started with that big state (cut), and its own small output is whole.
    assert small.truncated is True and isinstance(small.input, str)
    assert small.output == {"data": {"kept": "small"}}
    assert run.final_state == {"data": {"kept": "small"}}


async def test_output_past_total_bytes_stops_the_run(runtime_dir: Path) -> None:
    doc = workflow(
        [
            Job("one", "fn(s => { s.data.big = 'y'.repeat(40000); return s; });"),
            Job("two", "fn(s => { s.data.more = 'z'.repeat(40000); return s; });"),
            Job("three", "fn(s => { s.data.three = true; return s; });"),
        ]
    )
    runner = LocalRunner(RunLimits(step_bytes=200_000, total_bytes=100_000), runtime_dir)
    run = await runner.run(doc, RunRequest(), run_id="total-bytes")

    assert run.status == "failed"
    assert run.error == "The run's output passed the 100000-byte limit and was stopped."
    assert [(s.key, s.status) for s in run.steps] == [("one", "succeeded"), ("two", "failed")]
    assert run.steps[0].output == {"data": {"big": "y" * 40000}}
    assert run.steps[1].error == "stopped: the run's output passed 100000 bytes"
    assert "three" not in {s.key for s in run.steps}
    assert run.final_state is None


async def test_a_step_past_memory_mb_fails_out_of_memory_not_a_hang(runtime_dir: Path) -> None:
    doc = workflow(
        [
            Job(
                "hog",
                "fn(s => { const a = [];"
                " while (true) a.push(new Array(1e5).fill(Math.random())); });",
            )
        ]
    )
    begin = time.monotonic()
    run = await LocalRunner(RunLimits(timeout_s=20, memory_mb=32), runtime_dir).run(
        doc, RunRequest(), run_id="oom"
    )

    assert time.monotonic() - begin < 10
    assert run.status == "failed"
    assert run.error == "The run ran out of memory (limit 32 MB)."
    assert [(s.key, s.status, s.error) for s in run.steps] == [
        ("hog", "failed", "stopped: out of memory (limit 32 MB)")
    ]
