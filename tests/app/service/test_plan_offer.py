"""Routing (issue 23): a spec describing several processes, pasted into an ordinary
editing session, is not built as one giant workflow. The turn changes nothing and its
``message`` frame offers plan mode (``offer: "plan"``, one question); sending the same
message again with ``mode: "plan"`` proposes a plan for the workflow's project. One
process (a list of steps with a branch) is built as before, with no offer. The offline
model, SQLite and Postgres."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models.base import ChatModel, ModelRole
from agents.offline import OfflineModel
from app.main import create_app
from tests.app.service.helpers import (
    EDITOR,
    NAMES,
    SPEC,
    auth,
    connect,
    create_session,
    make_settings,
    turn,
    until,
)

EMPTY = "name: Intake\njobs: {}\ntriggers: {}\nedges: {}\n"
ENDS = ("turn.completed", "error", "plan.proposed")


@pytest.fixture
def client(tmp_path: Path, database_url: str) -> Any:
    model = OfflineModel()
    models: dict[ModelRole, ChatModel] = {"router": model, "planner": model, "job_code": model}
    with TestClient(create_app(make_settings(tmp_path, database_url), models=models)) as client:
        yield client


def _frames(ws: Any, frame: dict[str, Any]) -> list[dict[str, Any]]:
    ws.send_json(frame)
    return until(ws, ENDS, limit=200)


def _session(client: TestClient) -> tuple[str, str]:
    created = client.post("/v1/workflows", json={"yaml": EMPTY}, headers=auth(EDITOR))
    assert created.status_code == 201, created.text
    return created.json()["id"], create_session(client, created.json()["id"])["id"]


def test_a_multi_process_spec_in_an_edit_session_offers_plan_mode(client: TestClient) -> None:
    workflow_id, session_id = _session(client)
    before = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    with connect(client, session_id) as ws:
        frames = _frames(ws, turn(SPEC))
        kinds = [f["type"] for f in frames]
        assert "workflow" not in kinds and "confirm.required" not in kinds
        assert kinds[-1] == "turn.completed" and frames[-1]["version"] == before["version"]
        message = next(f for f in frames if f["type"] == "message")
        assert message["offer"] == "plan"
        assert "4 separate processes" in message["text"]
        assert all(f'"{name}"' in message["text"] for name in NAMES)
        assert "nothing was changed" in message["text"]
        # The offer taken: the same message as a plan proposes the project's plan.
        planned = _frames(ws, {**turn(SPEC), "mode": "plan"})
    assert planned[-1]["type"] == "plan.proposed", planned[-1]
    assert [w["name"] for w in planned[-1]["plan"]["workflows"]] == NAMES
    after = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert after["yaml"] == before["yaml"]


def test_one_process_is_built_without_an_offer(client: TestClient) -> None:
    _, session_id = _session(client)
    steps = (
        "Create a workflow called Referral intake:\n1. Pull the referral from Epic\n"
        "2. Check the insurance\n3. If the plan is BlueCross HMO, submit a prior-auth request "
        "through the payer portal\n4. Otherwise verify the coverage is active\n"
        "5. Attach the clinical documents"
    )
    with connect(client, session_id) as ws:
        frames = _frames(ws, turn(steps))
    message = next(f for f in frames if f["type"] == "message")
    assert message.get("offer") is None
    assert any(f["type"] == "workflow" for f in frames)
