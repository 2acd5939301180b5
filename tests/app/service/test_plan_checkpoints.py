"""Plan turns keep checkpoints only while they can be resumed, like workflow turns
(``test_checkpoints``): a plan paused for review keeps exactly its own thread (any
worker sharing the database can answer it); a plan turn that ended, built, rejected
or superseded, leaves none, its builds' runs included."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from tests.agents.plan.helpers import COVERAGE, INTAKE, ProposingModel, plan_of
from tests.app.service.helpers import EDITOR, auth, checkpoint_rows, connect, turn, until


@pytest.fixture
def model() -> ProposingModel:  # type: ignore[override]
    return ProposingModel(plan_of(INTAKE, COVERAGE), plan_of(INTAKE, COVERAGE))


def checkpoint_threads(database_url: str, tmp_path: Path) -> set[str]:
    """The thread ids (turn ids) that have a checkpoint in the service's saver."""
    query = "SELECT DISTINCT thread_id FROM checkpoints"
    if database_url.startswith("sqlite"):
        with sqlite3.connect(tmp_path / "checkpoints.db") as db:
            return {str(row[0]) for row in db.execute(query)}
    with psycopg.connect(database_url) as db:
        return {str(row[0]) for row in db.execute(query)}


def _paused_plan(client: TestClient) -> tuple[str, str, dict[str, Any]]:
    """A project session with a plan turn paused at review: project, session, frame."""
    project = client.post("/v1/projects", json={"name": "Referrals"}, headers=auth(EDITOR))
    assert project.status_code == 201, project.text
    session = client.post(
        "/v1/sessions", json={"project_id": project.json()["id"]}, headers=auth(EDITOR)
    )
    assert session.status_code == 201, session.text
    with connect(client, session.json()["id"]) as ws:
        ws.send_json({**turn("the spec"), "mode": "plan"})
        proposed = until(ws, "plan.proposed")[-1]
    return project.json()["id"], session.json()["id"], proposed


def _answer(
    client: TestClient, session_id: str, request_id: str, approved: bool
) -> list[dict[str, Any]]:
    with connect(client, session_id) as ws:
        ws.send_json({"type": "confirm", "request_id": request_id, "approved": approved})
        return until(ws, "turn.completed", limit=400)


def test_a_paused_plan_keeps_its_one_checkpoint_and_a_built_one_leaves_none(
    app_client: Callable[..., TestClient], database_url: str, tmp_path: Path
) -> None:
    worker_a, worker_b = app_client(), app_client()  # one database, one checkpointer
    project_id, session_id, proposed = _paused_plan(worker_a)
    assert checkpoint_threads(database_url, tmp_path) == {proposed["turn_id"]}
    frames = _answer(worker_b, session_id, proposed["request_id"], approved=True)
    built = [f["workflow_key"] for f in frames if f.get("status") == "built"]
    assert built == ["intake", "coverage"]
    project = worker_a.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()
    assert project["plan"]["status"] == "built"
    assert checkpoint_rows(database_url, tmp_path) == 0


def test_a_rejected_plan_leaves_no_checkpoint(
    client: TestClient, database_url: str, tmp_path: Path
) -> None:
    project_id, session_id, proposed = _paused_plan(client)
    assert checkpoint_threads(database_url, tmp_path) == {proposed["turn_id"]}
    frames = _answer(client, session_id, proposed["request_id"], approved=False)
    assert not [f for f in frames if f["type"] == "plan.progress"]
    project = client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()
    assert project["plan"]["status"] == "rejected"
    assert checkpoint_rows(database_url, tmp_path) == 0


def test_a_revised_plan_keeps_one_checkpoint_and_a_new_turn_drops_it(
    client: TestClient, model: ProposingModel, database_url: str, tmp_path: Path
) -> None:
    model.proposals.append("Nothing to plan in that.")  # the superseding turn's answer
    _, session_id, first = _paused_plan(client)
    with connect(client, session_id) as ws:
        ws.send_json(
            {
                "type": "confirm",
                "request_id": first["request_id"],
                "approved": False,
                "feedback": "Keep coverage after intake.",
            }
        )
        second = until(ws, "plan.proposed")[-1]
        # Still the same turn, paused again: still its one thread.
        assert second["turn_id"] == first["turn_id"]
        assert checkpoint_threads(database_url, tmp_path) == {first["turn_id"]}
        ws.send_json({**turn("never mind"), "mode": "plan"})
        until(ws, "turn.completed")
    assert checkpoint_rows(database_url, tmp_path) == 0
