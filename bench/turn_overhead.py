"""Turn overhead: server time per tool round, and parallel code fan-out wall time.

Prints one JSON object:
  tool_round_overhead_ms_p50: per tool round, wall time minus time inside the
      (scripted, fixed-latency) model, on a 200-job document, with the SQLite
      checkpointer the service uses, each mutation committed to a SQLite store and
      published on the in-process bus through the service's Publisher (a watcher
      subscribed, so the publish fans out). Target <= 20 ms.
  commit_publish_ms_p50: the commit-and-publish part of one round alone.
  fanout_8x1s_wall_s: wall time of a round fanning out 8 code sub-agents whose
      model calls take 1 s each. Target <= 1.25 s (8 s if sequential).
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.graph import build_graph
from agents.models import ModelRequest, ModelResponse, ScriptedModel
from agents.runner import TurnRunner
from agents.runtime import AgentConfig, Commit, TurnRuntime
from app.bus import InProcessBus
from app.publishing import Publisher
from app.store import Store, create_engine, migrate
from bench.edit_latency import build_document

ROUNDS = 10
JOBS = 200
LATENCY_S = 0.02


class TimedModel:
    """Wraps a model and adds up the time spent inside it."""

    name = "timed"

    def __init__(self, inner: ScriptedModel) -> None:
        self.inner = inner
        self.seconds = 0.0

    async def create(self, request: ModelRequest, *, on_text: Any = None) -> ModelResponse:
        start = time.perf_counter()
        try:
            response: ModelResponse = await self.inner.create(request, on_text=on_text)
            return response
        finally:
            self.seconds += time.perf_counter() - start


def _rename_rounds(rounds: int) -> list[ModelResponse]:
    script = [
        ScriptedModel.tool_calls(
            ("update_jobs", {"jobs": [{"key": f"step-{i}", "name": f"Renamed step {i}"}]})
        )
        for i in range(rounds)
    ]
    return [*script, ScriptedModel.text("Renamed the steps.")]


@dataclass
class TimedCommitter:
    """Commits and publishes through the service's Publisher, timing it."""

    publisher: Publisher
    workflow_id: str
    seconds: float = 0.0

    async def commit(self, change: Commit) -> int:
        start = time.perf_counter()
        try:
            return await self.publisher.commit_and_publish(self.workflow_id, change, author="bench")
        finally:
            self.seconds += time.perf_counter() - start


async def _drain(subscription: Any) -> None:
    async for _ in subscription:
        pass


async def _overhead(
    saver: AsyncSqliteSaver, folder: Path, runs: int
) -> tuple[list[float], list[float]]:
    graph = build_graph(saver)
    doc = build_document(JOBS)
    yaml = doc.to_yaml()
    engine = create_engine(f"sqlite:///{folder / 'store.db'}")
    await migrate(engine)
    store, bus = Store(engine), InProcessBus()
    publisher = Publisher(store, bus)
    per_round: list[float] = []
    commit_ms: list[float] = []
    try:
        for run in range(runs):
            record = await store.create_workflow(name="Bench", yaml=yaml)
            watcher = asyncio.create_task(_drain(await bus.subscribe(record.id)))
            model = TimedModel(ScriptedModel(_rename_rounds(ROUNDS), latency=LATENCY_S))
            committer = TimedCommitter(publisher, record.id)
            runtime = TurnRuntime(
                models={"router": model, "planner": model, "job_code": model},
                clock=store.now,  # as the service does
                config=AgentConfig(max_tool_calls=50),
                committer=committer,
            )
            runtime.adopt(doc.copy(), record.version)  # the service keeps it parsed
            turn: dict[str, Any] = {
                "turn_id": f"overhead-{run}",
                "user_text": "rename",
                "yaml": yaml,
            }
            turn["version"] = record.version
            start = time.perf_counter()
            async for _ in TurnRunner(graph).start(turn, runtime):
                pass
            wall = time.perf_counter() - start
            watcher.cancel()
            per_round.append((wall - model.seconds) / ROUNDS * 1000)
            commit_ms.append(committer.seconds / ROUNDS * 1000)
            assert publisher.pending == 0
    finally:
        await publisher.close()
        await bus.close()
        await engine.dispose()
    return per_round, commit_ms


async def _fanout(saver: AsyncSqliteSaver) -> float:
    keys = [f"step-{i}" for i in range(8)]
    planner = ScriptedModel(
        [
            ScriptedModel.tool_calls(
                *[("call_job_code_agent", {"job_key": k, "message": "fetch it"}) for k in keys]
            ),
            ScriptedModel.text("Wrote the code."),
        ]
    )

    def code(request: ModelRequest) -> ModelResponse:
        body = f"get('/{request.context.job_key}');"
        return ScriptedModel.tool_calls(
            ("edit_job_code", {"edits": [{"action": "rewrite", "new_code": body}]})
        )

    coder = ScriptedModel([code] * 8, latency=1.0)
    runtime = TurnRuntime(
        models={"router": planner, "planner": planner, "job_code": coder},
        clock=partial(datetime.now, UTC),
    )
    yaml = build_document(20).to_yaml()
    turn = {"turn_id": "fanout", "user_text": "write code", "yaml": yaml, "version": 1}
    runner = TurnRunner(build_graph(saver))
    start = time.perf_counter()
    async for _ in runner.start(turn, runtime):
        pass
    wall = time.perf_counter() - start
    state = await runner.state("fanout")
    assert all(f"get('/{k}');" in state["yaml"] for k in keys)
    return wall


async def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        async with AsyncSqliteSaver.from_conn_string(str(folder / "cp.sqlite")) as saver:
            await _overhead(saver, folder, 1)  # warm-up: imports, prompt files, catalogue
            gc.collect()
            gc.freeze()  # what the service's start-up leaves, frozen as app.main does
            overhead, commits = await _overhead(saver, folder, 5)
            fanout = await _fanout(saver)
    print(
        json.dumps(
            {
                "jobs": JOBS,
                "tool_round_overhead_ms_p50": round(statistics.median(overhead), 2),
                "commit_publish_ms_p50": round(statistics.median(commits), 2),
                "fanout_8x1s_wall_s": round(fanout, 3),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
