"""Review mode: from a proposal's answer to its committed version, at 200 jobs.

``measure_review()`` runs the real app in process (SQLite store, in-process bus,
scripted planner) on a 200-job workflow: a review-mode turn renames two steps and
adds one (three changes), ends with a ``proposal``; the client then waits until the
service has the head parsed again (as it has while a person reads the proposal),
sends ``review`` accepting every change, and times until the ``workflow`` frame of
the committed version arrives. Target: median <= 50 ms. ``bench/run_latency.py``
prints it with the test-run latency.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastapi.testclient import TestClient

from agents.models import ScriptedModel
from app.main import create_app
from app.settings import Settings
from bench.edit_latency import build_document

JOBS = 200
TOKEN = "bench-editor-token-0123456789"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def _script(model: ScriptedModel, round_: int) -> None:
    model.push(
        ScriptedModel.tool_calls(
            (
                "update_jobs",
                {
                    "jobs": [
                        {"key": "step-1", "name": f"Renamed first {round_}"},
                        {"key": "step-2", "name": f"Renamed second {round_}"},
                    ]
                },
            )
        ),
        ScriptedModel.tool_calls(
            ("add_jobs", {"jobs": [{"name": f"Archive {round_}", "adaptor": "common"}]})
        ),
        ScriptedModel.text("Renamed two steps and added an archive step."),
    )


def _until(ws: Any, kind: str) -> dict[str, Any]:
    for _ in range(500):
        frame: dict[str, Any] = ws.receive_json()
        if frame["type"] == "error":
            raise RuntimeError(f"the service answered {frame}")
        if frame["type"] == kind:
            return frame
    raise RuntimeError(f"no {kind} frame")


def measure_review(jobs: int = JOBS, rounds: int = 10) -> dict[str, Any]:
    yaml = build_document(jobs).to_yaml()
    model = ScriptedModel([])
    with tempfile.TemporaryDirectory(prefix="bench-review-") as tmp:
        settings = Settings(
            environment="test",
            database_url=f"sqlite:///{Path(tmp) / 'planwright.db'}",
            checkpoint_path=Path(tmp) / "checkpoints.db",
            tokens=json.dumps({TOKEN: "editor"}),
            redis_url=None,
            anthropic_api_key=None,
        )
        models = {"router": model, "planner": model, "job_code": model}
        samples: list[float] = []
        with TestClient(create_app(settings, models=models)) as client:  # type: ignore[arg-type]
            turns = client.app.state.services.turns  # type: ignore[attr-defined]
            workflow = client.post("/v1/workflows", json={"yaml": yaml}, headers=HEADERS).json()
            session = client.post(
                "/v1/sessions",
                json={"workflow_id": workflow["id"], "review": True},
                headers=HEADERS,
            ).json()
            url = f"/v1/sessions/{session['id']}/ws?token={TOKEN}"
            with client.websocket_connect(url) as ws:
                for round_ in range(rounds):
                    _script(model, round_)
                    turn = {"type": "turn", "content": "rename and add", "context": {}}
                    ws.send_json(turn)
                    proposal = _until(ws, "proposal")
                    head = proposal["base_version"]
                    deadline = time.monotonic() + 30
                    while (turns.kept_parsed(workflow["id"]) or (None, None))[1] != head:
                        if time.monotonic() > deadline:
                            raise RuntimeError("the head was never kept parsed")
                        time.sleep(0.01)
                    accepted = [c["id"] for c in proposal["changes"]]
                    answer = {"type": "review", "request_id": proposal["request_id"]}
                    start = time.perf_counter()
                    ws.send_json({**answer, "accepted": accepted})
                    committed = _until(ws, "workflow")
                    samples.append((time.perf_counter() - start) * 1000)
                    if committed["version"] != head + 1:
                        raise RuntimeError(f"committed {committed['version']}, not {head + 1}")
                    _until(ws, "turn.completed")
    return {
        "review_jobs": jobs,
        "review_rounds": rounds,
        "review_changes": 3,
        "accept_to_commit_p50_ms": round(statistics.median(samples), 2),
        "accept_to_commit_max_ms": round(max(samples), 2),
    }


if __name__ == "__main__":
    print(json.dumps(measure_review()))
