"""Issue 27's eight chat-built shapes, through the service with the embedded (offline)
model and no YAML edits: each workflow is described in chat, its code written in chat
("write code for all steps"), its credentials attached in chat; the project holds the
credentials (names and baseUrls, no secrets). The ``cli`` export then carries no warning,
and test runs in OpenFn's runtime (``POST /v1/workflows/{id}/runs``: the pinned
``@openfn/runtime`` and real adaptors, every HTTP call answered from samples) given only
a credential configuration take the path each sample means: every step succeeds, or
fails exactly where the sample makes it fail. SQLite and Postgres."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models.base import ChatModel, ModelRole
from agents.offline import OfflineModel
from app.main import create_app
from tests.app.service.helpers import EDITOR, auth, connect, make_settings, turn

CODE = "write code for all steps"


def _api(name: str) -> str:
    return f"https://{name}.example.org"


@dataclass(frozen=True)
class Sample:
    data: dict[str, Any]
    path: list[str]
    """Step keys in the order they ran."""
    failed: list[str] = field(default_factory=list)
    fail_api: str | None = None
    """The credential whose API answers 500 to everything."""


@dataclass(frozen=True)
class Shape:
    name: str
    turns: list[str]
    credentials: dict[str, str]
    """Credential name -> schema; each one's baseUrl is ``_api(name)``."""
    samples: list[Sample]


GET_REFERRAL = "get-referral-from-referral-api"
SHAPES = [
    Shape(
        "two-relative-http-steps",
        [
            "create a workflow called Orders sync that gets orders from the shop api, "
            "then posts them to the crm api",
            CODE,
            "use the shop-api credential for get orders from shop api",
            "post orders to crm api should use credential crm-api",
        ],
        {"shop-api": "http", "crm-api": "http"},
        [
            Sample({}, ["get-orders-from-shop-api", "post-orders-to-crm-api"]),
            Sample(
                {},
                ["get-orders-from-shop-api", "post-orders-to-crm-api"],
                failed=["post-orders-to-crm-api"],
                fail_api="crm-api",
            ),
            Sample({}, ["get-orders-from-shop-api"], ["get-orders-from-shop-api"], "shop-api"),
        ],
    ),
    Shape(
        "branch-otherwise-join",
        [
            "Create a workflow called Referral intake:\n"
            "1. Get the referral from the referral API\n"
            "2. Check the insurance\n"
            "3. If the plan is BlueCross HMO, submit a prior-auth request through the payer "
            "portal\n"
            "4. Otherwise verify the coverage is active\n"
            "5. Attach the clinical documents",
            CODE,
            "use the payer-portal credential for the http steps",
        ],
        {"payer-portal": "http"},
        [
            Sample(
                {"plan": "BlueCross HMO"},
                [
                    GET_REFERRAL,
                    "check-insurance",
                    "submit-prior-auth-request-through-payer-portal",
                    "attach-clinical-documents",
                ],
            ),
            Sample(
                {"plan": "Aetna PPO"},
                [
                    GET_REFERRAL,
                    "check-insurance",
                    "verify-coverage-is-active",
                    "attach-clinical-documents",
                ],
            ),
        ],
    ),
    Shape(
        "http-fhir-http",
        [
            "create a workflow called Coverage report that gets referrals from http, checks "
            "coverage with fhir, then posts the result to the clinic api",
            CODE,
            "use the clinic-api credential for the http steps",
            "use the fhir-sandbox credential for the fhir steps",
        ],
        {"clinic-api": "http", "fhir-sandbox": "fhir"},
        [
            Sample({}, ["get-referrals", "check-coverage", "post-result-to-clinic-api"]),
            Sample({}, ["get-referrals", "check-coverage"], ["check-coverage"], "fhir-sandbox"),
        ],
    ),
    Shape(
        "failure-edge-on-a-schedule",
        [
            "Create a workflow called Order sync:\n"
            "1) Get orders from the shop API\n"
            "2) Save them through the warehouse API\n"
            "3) If that fails, notify the ops team through the alerts API\n"
            "4) Send a confirmation through the messaging API",
            "run it every day at 7",
            CODE,
            "use the shop-api credential for get orders from shop api",
            "use the warehouse-api credential for save orders through warehouse api",
            "use the alerts-api credential for notify ops team through alerts api",
            "use the messaging-api credential for send confirmation through messaging api",
        ],
        {
            "shop-api": "http",
            "warehouse-api": "http",
            "alerts-api": "http",
            "messaging-api": "http",
        },
        [
            Sample(
                {},
                [
                    "get-orders-from-shop-api",
                    "save-orders-through-warehouse-api",
                    "send-confirmation-through-messaging-api",
                ],
            ),
            Sample(
                {},
                [
                    "get-orders-from-shop-api",
                    "save-orders-through-warehouse-api",
                    "notify-ops-team-through-alerts-api",
                ],
                ["save-orders-through-warehouse-api"],
                "warehouse-api",
            ),
        ],
    ),
    Shape(
        "failure-or-otherwise",
        [
            "Create a workflow called Lab results:\n"
            "1. Get the lab result from the lab API\n"
            "2. If that fails, alert the lab team through the alerts API\n"
            "3. Otherwise store it through the records API",
            CODE,
            "use the lab-api credential for get lab result from lab api",
            "use the alerts-api credential for alert lab team through alerts api",
            "use the records-api credential for store lab result through records api",
        ],
        {"lab-api": "http", "alerts-api": "http", "records-api": "http"},
        [
            Sample({}, ["get-lab-result-from-lab-api", "store-lab-result-through-records-api"]),
            Sample(
                {},
                ["get-lab-result-from-lab-api", "alert-lab-team-through-alerts-api"],
                ["get-lab-result-from-lab-api"],
                "lab-api",
            ),
        ],
    ),
    Shape(
        "numeric-branch",
        [
            "Create a workflow called Invoice approval:\n"
            "1. Get the invoice from the billing API\n"
            "2. If the total is over 1000, send it for approval through the approvals API\n"
            "3. Otherwise post it to the ledger API",
            CODE,
            "use the billing-api credential for the http steps",
        ],
        {"billing-api": "http"},
        [
            Sample(
                {"total": 1500},
                [
                    "get-invoice-from-billing-api",
                    "send-invoice-for-approval-through-approvals-api",
                ],
            ),
            Sample({"total": 1000}, ["get-invoice-from-billing-api", "post-invoice-to-ledger-api"]),
        ],
    ),
    Shape(
        "status-precondition",
        [
            "create a workflow called Referral status that gets the referral from the referral api",
            CODE,
            "advance the referral to active only when coverage is verified and the documents "
            "are attached, otherwise on-hold",
            "use the referral-api credential for the http steps",
        ],
        {"referral-api": "http"},
        [
            Sample(
                {"coverageVerified": True, "documentsAttached": True},
                [
                    GET_REFERRAL,
                    "check-referral-active-preconditions",
                    "set-referral-status-to-active",
                ],
            ),
            Sample(
                {"coverageVerified": True},
                [
                    GET_REFERRAL,
                    "check-referral-active-preconditions",
                    "set-referral-status-to-on-hold",
                ],
            ),
        ],
    ),
    Shape(
        "rule-table",
        [
            "create a workflow called Document check that gets the referral from the referral api",
            CODE,
            "Orthopedic needs imaging; cardiology needs an EKG report and labs; behavioral "
            "health a clinical summary, no labs",
            "use the referral-api credential for the http steps",
        ],
        {"referral-api": "http"},
        [
            Sample(
                {"type": "cardiology", "documents": ["EKG report", "labs"]},
                [GET_REFERRAL, "check-requirements-by-type"],
            ),
            Sample(
                {"type": "dermatology", "documents": []},
                [GET_REFERRAL, "check-requirements-by-type"],
                ["check-requirements-by-type"],
            ),
        ],
    ),
]


@pytest.fixture
def client(tmp_path: Path, database_url: str) -> Iterator[TestClient]:
    model = OfflineModel()
    models: dict[ModelRole, ChatModel] = {"router": model, "planner": model, "job_code": model}
    with TestClient(create_app(make_settings(tmp_path, database_url), models=models)) as client:
        yield client


def _chat(client: TestClient, session_id: str, content: str) -> list[dict[str, Any]]:
    """One turn; a confirmation it asks for (the trigger's type change) is approved."""
    frames: list[dict[str, Any]] = []
    with connect(client, session_id) as ws:
        ws.send_json(turn(content))
        for _ in range(400):
            frame = ws.receive_json()
            frames.append(frame)
            if frame["type"] == "confirm.required":
                ws.send_json(
                    {"type": "confirm", "request_id": frame["request_id"], "approved": True}
                )
            if frame["type"] in ("turn.completed", "error"):
                return frames
    raise AssertionError(f"the turn did not end: {frames[-5:]}")


def _responses(shape: Shape, sample: Sample) -> list[dict[str, Any]]:
    """Every API the shape's credentials name answers every method; ``fail_api`` with 500."""
    answers = []
    for name in shape.credentials:
        status = 500 if name == sample.fail_api else 200
        body = {"error": "down"} if status == 500 else sample.data
        for method in ("GET", "POST", "PUT"):
            answers.append(
                {"method": method, "url": f"{_api(name)}/*", "status": status, "body": body}
            )
    return answers


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_a_chat_built_shape_runs_with_a_credential_configuration_only(
    client: TestClient, shape: Shape
) -> None:
    project = client.post("/v1/projects", json={"name": shape.name}, headers=auth(EDITOR))
    assert project.status_code == 201, project.text
    project_id = project.json()["id"]
    stored = client.put(
        f"/v1/projects/{project_id}/credentials",
        json={
            "credentials": [
                {
                    "name": name,
                    "schema": schema,
                    "owner": "ops@example.org",
                    "fields": {"baseUrl": _api(name)},
                }
                for name, schema in shape.credentials.items()
            ]
        },
        headers=auth(EDITOR),
    )
    assert stored.status_code == 200, stored.text
    workflow = client.post("/v1/workflows", json={"project_id": project_id}, headers=auth(EDITOR))
    assert workflow.status_code == 201, workflow.text
    workflow_id = workflow.json()["id"]
    session = client.post("/v1/sessions", json={"workflow_id": workflow_id}, headers=auth(EDITOR))
    assert session.status_code == 201, session.text

    for content in shape.turns:
        frames = _chat(client, session.json()["id"], content)
        errors = [f for f in frames if f["type"] == "error"]
        assert not errors, (content, errors)
        assert any(f["type"] == "workflow" for f in frames), (content, frames[-3:])

    exported = client.get(f"/v1/workflows/{workflow_id}/export?format=cli", headers=auth(EDITOR))
    assert exported.status_code == 200, exported.text
    assert "x-planwright-warnings" not in exported.headers, exported.headers
    steps = json.loads(exported.text)["steps"]
    for step in steps:
        if "expression" in step and any("language-http" in a for a in step["adaptors"]):
            assert step.get("configuration") in shape.credentials, step

    configuration = {name: {"baseUrl": _api(name)} for name in shape.credentials}
    for sample in shape.samples:
        run = client.post(
            f"/v1/workflows/{workflow_id}/runs",
            json={
                "input": {"data": sample.data},
                "responses": _responses(shape, sample),
                "credentials": configuration,
            },
            headers=auth(EDITOR),
        )
        assert run.status_code == 201, run.text
        result = run.json()
        assert [s["key"] for s in result["steps"]] == sample.path, result["summary"]
        failed = [s["key"] for s in result["steps"] if s["status"] == "failed"]
        assert failed == sample.failed, result["summary"]
        assert result["status"] == ("failed" if sample.failed else "succeeded"), result["summary"]
        assert all(r["matched"] for r in result["requests"]), result["requests"]
