"""Turn overhead: server time per tool round, and parallel code fan-out wall time.

Prints one JSON object:
  tool_round_overhead_ms_p50: per tool round, wall time minus time inside the
      (scripted, fixed-latency) model, on a 20-job document, with the SQLite
      checkpointer the service uses. Target <= 20 ms.
  fanout_8x1s_wall_s: wall time of a round fanning out 8 code sub-agents whose
      model calls take 1 s each. Target <= 1.25 s (8 s if sequential).
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

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.graph import build_graph
from agents.models import ModelRequest, ModelResponse, ScriptedModel
from agents.runner import TurnRunner
from agents.runtime import AgentConfig, TurnRuntime
from bench.edit_latency import build_document

ROUNDS = 10
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


async def _overhead(saver: AsyncSqliteSaver, runs: int) -> list[float]:
    graph = build_graph(saver)
    yaml = build_document(20).to_yaml()
    per_round: list[float] = []
    for run in range(runs):
        model = TimedModel(ScriptedModel(_rename_rounds(ROUNDS), latency=LATENCY_S))
        runtime = TurnRuntime(
            models={"router": model, "planner": model, "job_code": model},  # type: ignore[dict-item]
            config=AgentConfig(max_tool_calls=50),
        )
        turn = {"turn_id": f"overhead-{run}", "user_text": "rename", "yaml": yaml, "version": 1}
        start = time.perf_counter()
        async for _ in TurnRunner(graph).start(turn, runtime):  # type: ignore[arg-type]
            pass
        wall = time.perf_counter() - start
        per_round.append((wall - model.seconds) / ROUNDS * 1000)
    return per_round


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
    runtime = TurnRuntime(models={"router": planner, "planner": planner, "job_code": coder})
    yaml = build_document(20).to_yaml()
    turn = {"turn_id": "fanout", "user_text": "write code", "yaml": yaml, "version": 1}
    runner = TurnRunner(build_graph(saver))
    start = time.perf_counter()
    async for _ in runner.start(turn, runtime):  # type: ignore[arg-type]
        pass
    wall = time.perf_counter() - start
    state = await runner.state("fanout")
    assert all(f"get('/{k}');" in state["yaml"] for k in keys)
    return wall


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        async with AsyncSqliteSaver.from_conn_string(str(Path(folder) / "cp.sqlite")) as saver:
            await _overhead(saver, 1)  # warm-up: imports, prompt files, catalogue
            overhead = await _overhead(saver, 7)
            fanout = await _fanout(saver)
    print(
        json.dumps(
            {
                "tool_round_overhead_ms_p50": round(statistics.median(overhead), 2),
                "fanout_8x1s_wall_s": round(fanout, 3),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
