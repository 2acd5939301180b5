"""A reviewer's questions through the service, answered by the embedded (offline) model
from the document itself (issue 23: "reviewer answers are exact"): counts, code sizes
and paths are computed, never estimated, in a read-only session that changes nothing.
SQLite and Postgres."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agents.models.base import ChatModel, ModelRole
from agents.offline import OfflineModel
from app.main import create_app
from tests.app.service.helpers import EDITOR, REVIEWER, auth, connect, make_settings, turn, until
from tests.documents import CODED_REFERRAL_DOC

# Fourteen lines of code in "Check coverage": the number the answer must give.
_COVERAGE_BODY = "\n".join(
    ["      // Look up the patient's coverage, then keep what the next steps need"]
    + [f"      fn(state => ({{ ...state, step{i}: {i} }}));" for i in range(1, 14)]
    + ["      get('Coverage', { query: { patient: $.patientId } });", "", "      // done"]
)
DOC = CODED_REFERRAL_DOC.replace(
    "      // Look up the patient's coverage\n"
    "      get('Coverage', { query: { patient: $.patientId } });",
    _COVERAGE_BODY,
)

QUESTIONS = [
    ("how much code does the coverage step have?", '"Check coverage" has 14 lines of code'),
    ("how many lines of code are in fetch referral?", '"Fetch referral" has 1 line of code'),
    ("how many steps use http?", '1 step of 3 uses http: "Fetch referral"'),
    ("how many steps have no code?", '1 step of 3 without code: "Alert staff"'),
    ("if check coverage fails, what happens?", 'If "Check coverage" fails: "Alert staff"'),
    ("what happens when check coverage succeeds?", "nothing runs on success"),
    ("which steps run after fetch referral?", 'After "Fetch referral": "Check coverage"'),
    ("how many connections are there?", "3 connections"),
]


@pytest.fixture
def client(tmp_path: Path, database_url: str) -> Iterator[TestClient]:
    model = OfflineModel()
    models: dict[ModelRole, ChatModel] = {"router": model, "planner": model, "job_code": model}
    with TestClient(create_app(make_settings(tmp_path, database_url), models=models)) as client:
        yield client


def test_a_reviewer_gets_exact_answers_and_nothing_changes(client: TestClient) -> None:
    created = client.post("/v1/workflows", json={"yaml": DOC}, headers=auth(EDITOR))
    assert created.status_code == 201, created.text
    workflow = created.json()
    session = client.post(
        "/v1/sessions",
        json={"workflow_id": workflow["id"], "read_only": True},
        headers=auth(REVIEWER),
    )
    assert session.status_code == 201, session.text
    with connect(client, session.json()["id"], token=REVIEWER) as ws:
        for question, answer in QUESTIONS:
            ws.send_json(turn(question))
            frames = until(ws, "turn.completed")
            text = next(f["text"] for f in frames if f["type"] == "message")
            assert answer in text, (question, text)
            assert not [f for f in frames if f["type"] in ("workflow", "error")], frames
    after = client.get(f"/v1/workflows/{workflow['id']}", headers=auth(REVIEWER)).json()
    assert after["version"] == workflow["version"]
    assert after["yaml"] == workflow["yaml"]
