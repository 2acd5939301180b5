"""An expert's correction through the service (issue 23): Linda's coverage check is built
from her own paragraph (seed 000), then her copay correction and the Aetna rule change
each add or widen exactly one guarded branch; every other line of the workflow stays
byte-identical, and the reply names the edge. A correction next to a sentence it cannot
place asks and changes nothing. The offline model, SQLite and Postgres."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models.base import ChatModel, ModelRole
from agents.offline import OfflineModel
from app.main import create_app
from tests.app.service.helpers import EDITOR, auth, connect, create_session, make_settings, turn
from tools.document import WorkflowDocument

LINDA = (
    "First I pull up the referral in Epic and check the insurance. If it's BlueCross and the "
    "plan code starts with HMO, I have to go to the BlueCross portal and submit a prior-auth "
    "request before I can attach the clinical docs. If it's Aetna, I check whether the "
    "referring provider is in-network first, because out-of-network Aetna referrals need a "
    "different form. For everything else, I just verify the coverage is active and move to "
    "documents."
)
COPAY = (
    "That's right, except when the coverage check returns `active` but there's a "
    "`copay-exception` extension, you need to flag it for manual review."
)
AETNA_RULE = (
    "Now any ortho referral with a plan code starting with `PPO-` also needs prior auth, not "
    "just the HMO plans."
)
AETNA_AS_SAID = "Oh, Aetna changed this in March. " + AETNA_RULE
GUARD = "!state.errors?.[upstreamStepId] && ("
EMPTY = "name: Coverage check\njobs: {}\ntriggers: {}\nedges: {}\n"


@pytest.fixture
def client(tmp_path: Path, database_url: str) -> Any:
    model = OfflineModel()
    models: dict[ModelRole, ChatModel] = {"router": model, "planner": model, "job_code": model}
    with TestClient(create_app(make_settings(tmp_path, database_url), models=models)) as client:
        yield client


def _say(ws: Any, text: str) -> tuple[str, list[dict[str, Any]]]:
    """Send one turn, approve any confirmation; the final message and every frame."""
    ws.send_json(turn(text))
    frames: list[dict[str, Any]] = []
    for _ in range(200):
        frame = ws.receive_json()
        frames.append(frame)
        if frame["type"] == "confirm.required":
            ws.send_json({"type": "confirm", "request_id": frame["request_id"], "approved": True})
        if frame["type"] in ("turn.completed", "error"):
            break
    assert frames[-1]["type"] == "turn.completed", frames[-1]
    message = next(f["text"] for f in reversed(frames) if f["type"] == "message")
    return message, frames


def _yaml(client: TestClient, workflow_id: str) -> str:
    response = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR))
    assert response.status_code == 200, response.text
    return str(response.json()["yaml"])


def _linda(client: TestClient) -> tuple[str, Any, str]:
    created = client.post("/v1/workflows", json={"yaml": EMPTY}, headers=auth(EDITOR))
    assert created.status_code == 201, created.text
    workflow_id = created.json()["id"]
    session = create_session(client, workflow_id)
    return workflow_id, session["id"], ""


def _removed_lines(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line.startswith("-") and not line.startswith("---")]


def test_linda_then_her_copay_correction_adds_one_guarded_branch(client: TestClient) -> None:
    workflow_id, session_id, _ = _linda(client)
    with connect(client, session_id) as ws:
        _say(ws, LINDA)
        built = _yaml(client, workflow_id)
        assert len(WorkflowDocument.from_yaml(built).structure.jobs) == 7
        message, _ = _say(ws, COPAY)
    after = _yaml(client, workflow_id)
    assert _removed_lines(built, after) == []  # every line of the build is still there
    before_doc, after_doc = WorkflowDocument.from_yaml(built), WorkflowDocument.from_yaml(after)
    assert set(after_doc.structure.jobs) - set(before_doc.structure.jobs) == {
        "flag-for-manual-review"
    }
    new_edges = set(after_doc.structure.edges) - set(before_doc.structure.edges)
    assert new_edges == {"verify-coverage-is-active->flag-for-manual-review"}
    edge = after_doc.structure.edges["verify-coverage-is-active->flag-for-manual-review"]
    assert edge.condition_type == "js_expression"
    assert edge.condition_expression == (
        GUARD + "state.data.status === 'active' && Boolean(state.data.copayException))"
    )
    assert "edge verify-coverage-is-active->flag-for-manual-review" in message
    assert "every other step and edge is unchanged" in message


def test_the_aetna_rule_adds_one_guarded_arm_and_asks_when_a_sentence_may_narrow_it(
    client: TestClient,
) -> None:
    workflow_id, session_id, _ = _linda(client)
    with connect(client, session_id) as ws:
        _say(ws, LINDA)
        built = _yaml(client, workflow_id)
        asked, _ = _say(ws, AETNA_AS_SAID)
        assert _yaml(client, workflow_id) == built  # asked, nothing changed
        assert "changed nothing" in asked and "Aetna changed this in March" in asked
        message, _ = _say(ws, AETNA_RULE)
    after = _yaml(client, workflow_id)
    assert _removed_lines(built, after) == []
    before_doc, after_doc = WorkflowDocument.from_yaml(built), WorkflowDocument.from_yaml(after)
    assert set(after_doc.structure.jobs) == set(before_doc.structure.jobs)
    new_edges = set(after_doc.structure.edges) - set(before_doc.structure.edges)
    assert new_edges == {"check-insurance->submit-prior-auth-request"}
    edge = after_doc.structure.edges["check-insurance->submit-prior-auth-request"]
    assert edge.condition_expression == (
        GUARD + "state.data.referralType === 'ortho' && state.data.planCode?.startsWith('PPO-'))"
    )
    assert "edge check-insurance->submit-prior-auth-request" in message
    assert "referral type is ortho" in message


def test_a_rule_that_widens_an_existing_branch_changes_only_that_edge(client: TestClient) -> None:
    workflow_id, session_id, _ = _linda(client)
    with connect(client, session_id) as ws:
        _say(ws, LINDA)
        built = _yaml(client, workflow_id)
        message, _ = _say(
            ws, "any referral with a plan code starting with PPO- also needs the BlueCross portal"
        )
    after = _yaml(client, workflow_id)
    removed = _removed_lines(built, after)
    # Only that edge's condition and label lines change.
    assert [line.split(":")[0].strip() for line in removed] == [
        "-    condition_expression",
        "-    condition_label",
    ]
    edge = WorkflowDocument.from_yaml(after).structure.edges[
        "check-insurance->go-to-bluecross-portal"
    ]
    assert edge.condition_expression == (
        GUARD + "(state.data.insurance === 'BlueCross' && state.data.planCode?.startsWith('HMO'))"
        " || (state.data.planCode?.startsWith('PPO-')))"
    )
    assert "One rule changed: edge check-insurance->go-to-bluecross-portal" in message


MARIA = (
    "**Document verification.** Maria knows which clinical documents are required for each "
    "referral type. Orthopedic referrals need recent imaging. Cardiology needs an EKG report "
    "and recent labs. Behavioral health needs a clinical summary but not labs. Maria walks "
    "through the logic. The system captures it. The compiled tool checks `DocumentReference` "
    "resources against referral-type requirements and identifies what's missing."
)
JAMES = (
    "**Provider validation.** James knows the receiving provider network. He knows which "
    "practices have stopped accepting certain insurance plans, which have capacity "
    "constraints, and which require specific referral formats. The compiled tool queries "
    "`Practitioner` and `Organization` resources and validates the referral against James's "
    "routing knowledge."
)


def test_maria_and_james_as_given_change_nothing_and_say_what_was_understood(
    client: TestClient,
) -> None:
    workflow_id, session_id, _ = _linda(client)
    before = _yaml(client, workflow_id)
    with connect(client, session_id) as ws:
        maria, frames = _say(ws, MARIA)
        assert not any(f["type"] == "workflow" for f in frames)
        james, frames = _say(ws, JAMES)
        assert not any(f["type"] == "workflow" for f in frames)
    assert _yaml(client, workflow_id) == before
    for said in (
        "changed nothing",
        "Orthopedic referrals: recent imaging",
        "Cardiology: EKG report, recent labs",
        "Behavioral health: clinical summary (not labs)",
        "FHIR resources it names: DocumentReference",
        'Not read as part of the process: "Maria walks through the logic"',
    ):
        assert said in maria, said
    for said in (
        "changed nothing",
        "stopped accepting certain insurance plans",
        "I could not read the rules themselves",
        "Practitioner, Organization",
    ):
        assert said in james, said
