"""Test-run latency: a 10-step workflow run on a sample in OpenFn's runtime (DESIGN §5c).

``python bench/run_latency.py [N]`` runs a linear 10-step workflow (eight ``fn`` steps
and two language-http steps whose calls are answered from samples) N times (default
10) through :class:`agents.testrun.LocalRunner`: one node subprocess per run, the
pinned ``@openfn/runtime``, the same limits and network isolation the service uses.
It times each ``run`` call (node start, adaptor load, the steps, the report) after
one untimed warm-up run, and prints one JSON object:

  run_p50_ms / run_p95_ms: wall time of one run; target run_p50_ms <= 1500;
  run_first_ms: the warm-up run (the first after the install check);
  accept_to_commit_p50_ms / _max_ms: ``bench.review_accept.measure_review()``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.testrun import LocalRunner, RunLimits, ensure_installed
from bench.edit_latency import percentile
from bench.review_accept import measure_review
from tools.testrun import RunRequest, SampleResponse

STEPS = 10
HTTP_STEPS = {
    3: "get('https://emr.example.org/patients/42');",
    7: "post('https://emr.example.org/visits', { body: { patient: 42 } });",
}
TARGET_P50_MS = 1500.0
REQUEST = RunRequest(
    input={"patient": 42},
    responses=[
        SampleResponse(url="https://emr.example.org/patients/*", body={"id": 42, "plan": "HMO"}),
        SampleResponse(
            method="POST", url="https://emr.example.org/visits", status=201, body={"visit": 1}
        ),
    ],
)


def build_workflow(steps: int = STEPS) -> str:
    """A linear workflow: webhook -> step-0 -> ... -> step-{steps-1} (on success)."""
    lines = ["name: Run bench", "triggers:", "  webhook:", "    type: webhook", "jobs:"]
    for i in range(steps):
        http = HTTP_STEPS.get(i)
        lines += [
            f"  step-{i}:",
            f"    name: Step {i}",
            f"    adaptor: '@openfn/language-{'http' if http else 'common'}@latest'",
            "    body: |",
            "      " + (http or f"fn(state => {{ state.data.step{i} = true; return state; }});"),
        ]
    lines += [
        "edges:",
        "  webhook->step-0:",
        "    source_trigger: webhook",
        "    target_job: step-0",
    ]
    lines.append("    condition_type: always")
    for i in range(steps - 1):
        lines += [
            f"  step-{i}->step-{i + 1}:",
            f"    source_job: step-{i}",
            f"    target_job: step-{i + 1}",
            "    condition_type: on_job_success",
        ]
    return "\n".join(lines) + "\n"


async def _time_runs(runs: int) -> tuple[float, list[float]]:
    runner = LocalRunner(RunLimits(), ensure_installed())
    workflow = build_workflow()
    samples: list[float] = []
    for i in range(runs + 1):
        start = time.perf_counter()
        run = await runner.run(workflow, REQUEST, run_id=f"bench-{i}")
        samples.append((time.perf_counter() - start) * 1000)
        if run.status != "succeeded" or len(run.steps) != STEPS:
            raise RuntimeError(f"bench run {i} did not run every step: {run.summary}")
        if [r.matched for r in run.requests] != [True, True]:
            raise RuntimeError(f"bench run {i}: a call went unanswered: {run.requests}")
    return samples[0], samples[1:]


def measure_runs(runs: int = 10) -> dict[str, Any]:
    first, samples = asyncio.run(_time_runs(runs))
    p50 = statistics.median(samples)
    return {
        "run_steps": STEPS,
        "run_http_steps": len(HTTP_STEPS),
        "runs": runs,
        "run_p50_ms": round(p50, 1),
        "run_p95_ms": round(percentile(samples, 0.95), 1),
        "run_first_ms": round(first, 1),
        "target_run_p50_ms": TARGET_P50_MS,
        "run_p50_ok": p50 <= TARGET_P50_MS,
    }


def main(argv: list[str]) -> None:
    runs = int(argv[0]) if argv else 10
    if runs < 1:
        raise SystemExit("N must be at least 1")
    print(json.dumps({**measure_runs(runs), **measure_review()}))


if __name__ == "__main__":
    main(sys.argv[1:])
