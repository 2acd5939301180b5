"""Plan reviews that can no longer be acted on: one proposal per project at a time,
and an answer that lost the race with a new message. SQLite and Postgres."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.agents.plan.helpers import COVERAGE, INTAKE, ProposingModel, plan_of
from tests.app.service.helpers import EDITOR, auth, connect, turn, until


@pytest.fixture
def model() -> ProposingModel:  # type: ignore[override]
    return ProposingModel(plan_of(INTAKE, COVERAGE), plan_of(INTAKE, COVERAGE))


def _plan_turn(text: str = "the spec") -> dict[str, Any]:
    return {**turn(text), "mode": "plan"}


def _session(client: TestClient, project_id: str) -> str:
    body = {"project_id": project_id}
    session = client.post("/v1/sessions", json=body, headers=auth(EDITOR))
    assert session.status_code == 201, session.text
    return str(session.json()["id"])


def _propose(client: TestClient, session_id: str, text: str = "the spec") -> dict[str, Any]:
    with connect(client, session_id) as ws:
        ws.send_json(_plan_turn(text))
        return until(ws, "plan.proposed")[-1]


def _confirm(client: TestClient, session_id: str, request_id: str) -> list[dict[str, Any]]:
    with connect(client, session_id) as ws:
        ws.send_json({"type": "confirm", "request_id": request_id, "approved": True})
        return until(ws, ("turn.completed", "error"), limit=400)


def test_only_the_newest_proposal_on_a_project_can_be_built(client: TestClient) -> None:
    """Two sessions each left a review open on one project: approving the older one
    would build every workflow a second time. It is stale; the newer one builds once."""
    project = client.post("/v1/projects", json={"name": "Referrals"}, headers=auth(EDITOR))
    project_id = project.json()["id"]
    first, second = _session(client, project_id), _session(client, project_id)
    older = _propose(client, first)
    newer = _propose(client, second)
    stale = _confirm(client, first, older["request_id"])
    assert stale[-1]["type"] == "error" and stale[-1]["code"] == "stale_confirmation"
    assert not [f for f in stale if f["type"] in ("plan.progress", "workflow")]
    after_stale = client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()
    assert after_stale["workflows"] == [] and after_stale["plan"]["status"] == "proposed"
    built = _confirm(client, second, newer["request_id"])
    assert built[-1]["type"] == "turn.completed"
    project_now = client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()
    names = sorted(w["name"] for w in project_now["workflows"])
    assert names == ["Coverage check", "Referral intake"], names
    assert project_now["plan"]["status"] == "built"
    turns = client.get(f"/v1/sessions/{first}", headers=auth(EDITOR)).json()["turns"]
    assert [(t["status"], t["error_code"]) for t in turns] == [("failed", "stale")]


def test_an_answer_that_lost_the_race_with_a_new_message_changes_nothing(
    client: TestClient, model: ProposingModel
) -> None:
    """The answer's own check ran before the new message took the plan lock; under the
    lock it finds the review superseded. The superseded proposal leaves the project."""
    model.proposals[-1] = "Nothing to plan in that."
    services = client.app.state.services  # type: ignore[attr-defined]
    project = client.post("/v1/projects", json={"name": "Referrals"}, headers=auth(EDITOR))
    project_id = project.json()["id"]
    session_id = _session(client, project_id)
    proposal = _propose(client, session_id)
    with connect(client, session_id) as ws:
        ws.send_json(_plan_turn("never mind"))
        until(ws, "turn.completed")
    plan = client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()["plan"]
    assert plan["status"] == "rejected" and plan["request_id"] is None
    session = client.portal.call(services.store.get_session, session_id)  # type: ignore[union-attr]
    principal = services.auth.authenticate(EDITOR)
    sent: list[Any] = []

    async def send(frame: Any) -> None:
        sent.append(frame)

    async def late_answer() -> None:
        await services.plans.resume(
            session, principal, proposal["turn_id"], True, send, request_id=proposal["request_id"]
        )

    client.portal.call(late_answer)  # type: ignore[union-attr]
    assert [f.code for f in sent] == ["no_pending_confirmation"]
    superseded = client.portal.call(services.store.get_turn, proposal["turn_id"])  # type: ignore[union-attr]
    assert (superseded.status, superseded.error_code) == ("cancelled", "superseded")
    detail = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert all(c["approved"] is None for c in detail["confirmations"])
    assert client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()["workflows"] == []
