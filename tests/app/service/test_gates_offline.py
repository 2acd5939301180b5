"""Review gates, escalations, status preconditions and rule tables through the service with
the offline model (SQLite and Postgres): each is one committed version whose steps then
take the expected path in OpenFn's runtime; a review before a step changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.offline import OfflineModel
from tests.app.service.helpers import EDITOR, auth, create_session, create_workflow, until

INTAKE = """\
name: Referral intake
jobs:
  verify:
    name: Verify referral
    adaptor: '@openfn/language-common@latest'
    body: |
      fn(state => ({ ...state, data: { ...state.data, verified: true } }));
triggers:
  webhook:
    type: webhook
    enabled: false
edges:
  webhook->verify:
    source_trigger: webhook
    target_job: verify
    condition_type: always
    enabled: true
"""
EMPTY = "name: Document verification\n"


@pytest.fixture
def model() -> OfflineModel:  # type: ignore[override]
    return OfflineModel()


def _turn(client: TestClient, session_id: str, text: str) -> list[dict[str, Any]]:
    with client.websocket_connect(f"/v1/sessions/{session_id}/ws?token={EDITOR}") as ws:
        ws.send_json({"type": "turn", "content": text, "review": False})
        frames = until(ws, ("turn.completed", "error", "confirm.required"), limit=200)
    return frames


def _said(frames: list[dict[str, Any]]) -> str:
    return " ".join(f["text"] for f in frames if f["type"] == "message")


def _versions(frames: list[dict[str, Any]]) -> list[int]:
    return [f["version"] for f in frames if f["type"] == "workflow"]


def _run(client: TestClient, workflow_id: str, **body: Any) -> Any:
    response = client.post(f"/v1/workflows/{workflow_id}/runs", json=body, headers=auth(EDITOR))
    assert response.status_code == 201, response.text
    return response.json()


def _yaml(client: TestClient, workflow_id: str) -> str:
    body = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    text: str = body["yaml"]
    return text


def test_a_review_at_the_end_posts_the_case_to_the_queue_and_runs(client: TestClient) -> None:
    workflow = create_workflow(client, INTAKE)
    session = create_session(client, workflow["id"])

    frames = _turn(client, session["id"], "send the referral to the coordinator for sign-off")

    assert frames[-1]["type"] == "turn.completed", frames[-1]
    assert _versions(frames) == [2]
    assert "Send referral to coordinator for review" in _said(frames)
    yaml = _yaml(client, workflow["id"])
    assert "credential: review-queue" in yaml and "/i/referral-intake-coordinator-review" in yaml
    queue = {"method": "POST", "url": "https://queue.example/reviews", "status": 202, "body": {}}
    run = _run(
        client,
        workflow["id"],
        input={"data": {"id": "r-1"}},
        responses=[queue],
        configuration={"baseUrl": "https://queue.example"},
    )
    assert run["status"] == "succeeded", run["summary"]
    assert [s["key"] for s in run["steps"]] == ["verify", "send-referral-to-coordinator-for-review"]
    assert [(r["method"], r["url"], r["matched"]) for r in run["requests"]] == [
        ("POST", "https://queue.example/reviews", True)
    ]


def test_a_review_before_a_step_changes_nothing_and_says_why(client: TestClient) -> None:
    workflow = create_workflow(client, INTAKE)
    session = create_session(client, workflow["id"])
    _turn(
        client,
        session["id"],
        "advance the referral to active only when coverage is "
        "verified and the documents are attached, otherwise on-hold",
    )

    frames = _turn(
        client,
        session["id"],
        "the referral must be approved by a supervisor before it is set to active",
    )

    assert frames[-1]["type"] == "turn.completed", frames[-1]
    assert _versions(frames) == []
    said = _said(frames)
    assert "changed nothing" in said and "Set referral status to active" in said


def test_an_escalation_on_failure_runs_only_when_the_step_fails(client: TestClient) -> None:
    workflow = create_workflow(client, INTAKE)
    session = create_session(client, workflow["id"])

    frames = _turn(client, session["id"], "if verify referral fails, escalate to the supervisor")

    assert _versions(frames) == [2], _said(frames)
    yaml = _yaml(client, workflow["id"])
    assert "condition_type: on_job_failure" in yaml
    run = _run(client, workflow["id"], input={"data": {}})
    assert [s["key"] for s in run["steps"]] == ["verify"]


@pytest.mark.parametrize(
    ("flags", "status"),
    [({"coverageVerified": True, "documentsAttached": True}, "active"), ({}, "on-hold")],
)
def test_a_status_transition_takes_the_side_its_checks_decide(
    client: TestClient, flags: dict[str, bool], status: str
) -> None:
    workflow = create_workflow(client, INTAKE)
    session = create_session(client, workflow["id"])

    frames = _turn(
        client,
        session["id"],
        "The workflow won't advance a referral to `active` unless coverage is verified and "
        "required documents are attached, otherwise put it on hold",
    )

    assert _versions(frames) == [2], _said(frames)
    run = _run(client, workflow["id"], input={"data": flags})
    assert run["status"] == "succeeded", run["summary"]
    assert [s["key"] for s in run["steps"]][-1] == f"set-referral-status-to-{status}"
    assert run["final_state"]["data"]["status"] == status


def test_a_rule_table_is_one_step_and_each_row_takes_its_own_result(client: TestClient) -> None:
    workflow = create_workflow(client, EMPTY)
    session = create_session(client, workflow["id"])

    frames = _turn(
        client,
        session["id"],
        "Orthopedic needs imaging; cardiology needs an EKG report and labs; behavioral "
        "health a clinical summary, no labs",
    )

    assert frames[-1]["type"] == "turn.completed", frames[-1]
    yaml = _yaml(client, workflow["id"])
    assert yaml.count("adaptor:") == 1 and "RULES" in yaml
    for referral, missing in (
        ({"type": "orthopedic", "documents": ["imaging"]}, []),
        ({"type": "cardiology", "documents": ["labs"]}, ["EKG report"]),
        ({"type": "behavioral health", "documents": ["labs"]}, ["clinical summary"]),
    ):
        run = _run(client, workflow["id"], input={"data": referral})
        assert run["status"] == "succeeded", run["summary"]
        assert run["final_state"]["data"]["missing"] == missing


REVIEWED_SPEC = """\
# Referral intake

## Intake
- Fetch the referral from the portal over http
- Validate the required fields

## Scheduling
After the intake coordinator reviews Intake's result.
- Book the appointment
- Record the booking
"""


def test_plan_mode_stores_the_review_contract_and_builds_both_parts(client: TestClient) -> None:
    project = client.post("/v1/projects", json={"name": "Referrals"}, headers=auth(EDITOR))
    assert project.status_code == 201, project.text
    project_id = project.json()["id"]
    session = client.post("/v1/sessions", json={"project_id": project_id}, headers=auth(EDITOR))
    assert session.status_code == 201, session.text
    url = f"/v1/sessions/{session.json()['id']}/ws?token={EDITOR}"
    with client.websocket_connect(url) as ws:
        ws.send_json({"type": "turn", "content": REVIEWED_SPEC, "mode": "plan"})
        proposed = _frames_until(ws, "plan.proposed")[-1]
        (contract,) = proposed["contracts"]
        assert (contract["via"], contract["reviewer"]) == ("review", "intake coordinator")
        ws.send_json({"type": "confirm", "request_id": proposed["request_id"], "approved": True})
        frames = _frames_until(ws, "turn.completed", limit=600)

    assert "review-queue" in _said(frames)
    detail = client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()
    stored = detail["plan"]["contracts"]
    assert [(c["via"], c["decisions"]) for c in stored] == [
        ("review", ["approved", "rejected", "corrected"])
    ]
    ids = {w["name"]: w["id"] for w in detail["workflows"]}
    assert "credential: review-queue" in _yaml(client, ids["Intake"])
    scheduling = _yaml(client, ids["Scheduling"])
    assert "custom_path: referrals-scheduling" in scheduling
    run = _run(
        client,
        ids["Scheduling"],
        input={"data": {"decision": "rejected", "case": {"id": "r-1"}}},
    )
    assert [s["key"] for s in run["steps"]] == [
        "read-intake-coordinator-decision",
        "record-intake-coordinator-rejection",
    ]


def _frames_until(ws: Any, kind: str, limit: int = 200) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    for _ in range(limit):
        frames.append(ws.receive_json())
        if frames[-1]["type"] in (kind, "error"):
            assert frames[-1]["type"] == kind, frames[-1]
            return frames
    raise AssertionError(f"no {kind} frame in {frames}")
