"""A 3,000-job import, and whether the server stays responsive meanwhile.

Runs a real ``uvicorn app.main:create_app --factory`` worker on a loopback port
(SQLite, the in-process bus, as ``tests/integration`` starts them) and imports a
generated 3,000-job workflow with ``POST /v1/workflows`` (no ids: the server
mints 3,000 job and 3,000 edge ids), ``RUNS`` times, while a second client polls
``GET /healthz`` every 10 ms. Prints one JSON object:

  import_s_median / import_s: wall time of each import request (parse, mint ids,
      validate, emit, store). Target <= 2 s.
  healthz_p50_ms / healthz_p99_ms / healthz_max_ms: latency of the health checks
      sent while an import was running (``healthz_samples`` of them). Target p99
      <= 100 ms: the YAML work runs off the event loop.
  idle_healthz_p99_ms: the same with nothing else running, for comparison.
  refuse_jobs / refuse_yaml_bytes / refuse_ms_median / refuse_ms: a
      ``REFUSE_JOBS``-job import (over ``max_jobs``, under the YAML size limit),
      ``RUNS`` times: wall time until its 413. Target <= 100 ms: the job count is
      read from the text before any parsing (tools/document/limits.py).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.ws_fanout import ms, percentile
from tests.integration.helpers import EDITOR, REDIS_URL, WorkerProcess, worker_env

JOBS = 3000
RUNS = 3
REFUSE_JOBS = 10_000
POLL_S = 0.01


def big_workflow(jobs: int = JOBS) -> str:
    """A linear workflow of ``jobs`` small steps, no ids (the server mints them)."""
    lines = ["name: Import bench", "jobs:"]
    for i in range(jobs):
        lines += [f"  s{i}:", f"    name: Step {i}", "    adaptor: '@openfn/language-http@latest'"]
        lines.append(f"    body: get('/items/{i}');")
    lines += ["triggers:", "  webhook:", "    type: webhook", "edges:"]
    lines += ["  webhook->s0:", "    source_trigger: webhook", "    target_job: s0"]
    lines.append("    condition_type: always")
    for i in range(jobs - 1):
        lines += [f"  s{i}->s{i + 1}:", f"    source_job: s{i}", f"    target_job: s{i + 1}"]
        lines.append("    condition_type: on_job_success")
    return "\n".join(lines) + "\n"


def many_jobs(jobs: int = REFUSE_JOBS) -> str:
    """``jobs`` jobs and no edges, no ids: ~66 bytes a job (10,000: ~660 KB)."""
    lines = ["name: Too many", "jobs:"]
    for i in range(jobs):
        lines += [
            f"  job-{i}:",
            f"    name: Job {i}",
            "    adaptor: '@openfn/language-common@latest'",
        ]
    return "\n".join(lines) + "\n"


async def refusals(http: httpx.AsyncClient) -> dict[str, Any]:
    doc = many_jobs()
    times: list[float] = []
    for _ in range(RUNS):
        start = time.perf_counter()
        response = await http.post("/v1/workflows", json={"yaml": doc})
        times.append(time.perf_counter() - start)
        assert response.status_code == 413, response.text
    return {
        "refuse_jobs": REFUSE_JOBS,
        "refuse_yaml_bytes": len(doc.encode()),
        "refuse_ms_median": ms(statistics.median(times)),
        "refuse_ms": [ms(t) for t in times],
    }


async def poll(http: httpx.AsyncClient, stop: asyncio.Event, out: list[float]) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        response = await http.get("/healthz")
        response.raise_for_status()
        out.append(time.perf_counter() - start)
        await asyncio.sleep(POLL_S)


async def measure(worker: WorkerProcess) -> dict[str, Any]:
    doc = big_workflow()
    headers = {"Authorization": f"Bearer {EDITOR}"}
    async with (
        httpx.AsyncClient(base_url=worker.base_url, headers=headers, timeout=120) as http,
        httpx.AsyncClient(base_url=worker.base_url, timeout=30) as health,
    ):
        await http.post("/v1/workflows", json={"yaml": "name: warm-up\n"})
        idle: list[float] = []
        stop = asyncio.Event()
        poller = asyncio.create_task(poll(health, stop, idle))
        await asyncio.sleep(1.0)
        stop.set()
        await poller
        busy: list[float] = []
        imports: list[float] = []
        for _ in range(RUNS):
            stop = asyncio.Event()
            poller = asyncio.create_task(poll(health, stop, busy))
            await asyncio.sleep(0.1)
            start = time.perf_counter()
            response = await http.post("/v1/workflows", json={"yaml": doc})
            imports.append(time.perf_counter() - start)
            stop.set()
            await poller
            response.raise_for_status()
            body = response.json()
            assert body["yaml"].count("    id: ") >= 2 * JOBS, "ids were not minted"
        refused = await refusals(http)
    return {
        "jobs": JOBS,
        "yaml_bytes": len(doc.encode()),
        "runs": RUNS,
        "import_s_median": round(statistics.median(imports), 3),
        "import_s": [round(s, 3) for s in imports],
        "healthz_samples": len(busy),
        "healthz_p50_ms": ms(statistics.median(busy)),
        "healthz_p99_ms": ms(percentile(busy, 99)),
        "healthz_max_ms": ms(max(busy)),
        "idle_healthz_p99_ms": ms(percentile(idle, 99)),
        **refused,
    }


def main() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        env = worker_env(
            database_url=f"sqlite:///{Path(folder) / 'bench.db'}",
            redis_url=REDIS_URL,
            anthropic_base_url="http://127.0.0.1:9",  # never called
            extra={"PLANWRIGHT_CHECKPOINT_PATH": str(Path(folder) / "checkpoints.db")},
        )
        del env["REDIS_URL"]  # the in-process bus: this measures the YAML work alone
        worker = WorkerProcess("import", env, Path(folder)).start()
        try:
            worker.wait_ready()
            return asyncio.run(measure(worker))
        finally:
            worker.stop()


if __name__ == "__main__":
    print(json.dumps(main()))
