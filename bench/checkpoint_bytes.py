"""Checkpoint bytes a turn leaves in the SQLite checkpointer the service uses.

Prints one JSON object, for a 10-round rename turn on a 200-job document:
  written_bytes: what the turn's checkpoints held when it ended (kept, as
      evals keep them to read the final state).
  left_after_completed_bytes: what a completed turn leaves behind in the
      service (its checkpoints are deleted). Target 0.
  left_while_paused_bytes: what a turn paused on a confirmation keeps (it must,
      to resume on any worker), and left_after_answer_bytes once answered.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sqlite3
import sys
import tempfile
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.graph import build_graph
from agents.models import ScriptedModel
from agents.runner import TurnRunner
from agents.runtime import AgentConfig, TurnRuntime
from bench.edit_latency import build_document

JOBS = 200
ROUNDS = 10


def _stored_bytes(path: Path, thread_id: str) -> int:
    with sqlite3.connect(path) as db:
        (saved,) = db.execute(
            "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0)"
            " FROM checkpoints WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        (writes,) = db.execute(
            "SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
    return int(saved) + int(writes)


def _runner(saver: AsyncSqliteSaver, keep: bool) -> TurnRunner:
    graph = build_graph(saver)
    if "keep_finished" in inspect.signature(TurnRunner).parameters:
        return TurnRunner(graph, keep_finished=keep)
    return TurnRunner(graph)  # before checkpoints were deleted: everything is kept


def _runtime(script: list[Any]) -> TurnRuntime:
    model = ScriptedModel(script)
    return TurnRuntime(
        models={"router": model, "planner": model, "job_code": model},
        clock=partial(datetime.now, UTC),
        config=AgentConfig(max_tool_calls=50),
    )


def _renames() -> list[Any]:
    return [
        ScriptedModel.tool_calls(
            ("update_jobs", {"jobs": [{"key": f"step-{i}", "name": f"Renamed step {i}"}]})
        )
        for i in range(ROUNDS)
    ] + [ScriptedModel.text("Renamed the steps.")]


async def _turn(runner: TurnRunner, turn_id: str, yaml: str, script: list[Any]) -> TurnRuntime:
    runtime = _runtime(script)
    turn = {"turn_id": turn_id, "user_text": "rename", "yaml": yaml, "version": 1}
    async for _ in runner.start(turn, runtime):
        pass
    return runtime


async def main() -> None:
    yaml = build_document(JOBS).to_yaml()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cp.sqlite"
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            await _turn(_runner(saver, True), "kept", yaml, _renames())
            await _turn(_runner(saver, False), "service", yaml, _renames())
            service = _runner(saver, False)
            remove = [
                ScriptedModel.tool_calls(("remove_jobs", {"keys": ["step-1"]})),
                ScriptedModel.text("Removed."),
            ]
            runtime = await _turn(service, "paused", yaml, _renames()[:ROUNDS] + remove)
            paused = _stored_bytes(path, "paused")
            async for _ in service.resume("paused", True, runtime):
                pass
            result = {
                "jobs": JOBS,
                "rounds": ROUNDS,
                "written_bytes": _stored_bytes(path, "kept"),
                "left_after_completed_bytes": _stored_bytes(path, "service"),
                "left_while_paused_bytes": paused,
                "left_after_answer_bytes": _stored_bytes(path, "paused"),
            }
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
