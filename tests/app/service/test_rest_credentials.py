"""A project's credentials over REST, attached in chat, and carried by the exports the
way OpenFn reads them (Lightning's ``credentials:`` section, the CLI's
``configuration``), with what OpenFn would trip over in ``X-Planwright-Warnings``."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient
from ruamel.yaml import YAML

from agents.models import ScriptedModel
from tests.app.service.helpers import (
    EDITOR,
    REVIEWER,
    auth,
    connect,
    create_session,
    create_workflow,
    turn,
    until,
)
from tests.documents import CODED_REFERRAL_DOC
from tools.credentials import STORED, ProjectCredentials

S = ScriptedModel
PORTAL = {
    "name": "payer-portal",
    "schema": "http",
    "owner": "ana@clinic.example",
    "fields": {"baseUrl": "https://payer.example"},
}
SANDBOX = {"name": "fhir-sandbox", "schema": "fhir"}


def _put(
    client: TestClient, project_id: str, credentials: list[dict[str, Any]], token: str = EDITOR
) -> Any:
    return client.put(
        f"/v1/projects/{project_id}/credentials",
        json={"credentials": credentials},
        headers=auth(token),
    )


def _export(client: TestClient, workflow_id: str, fmt: str) -> tuple[str, list[str]]:
    response = client.get(
        f"/v1/workflows/{workflow_id}/export", params={"format": fmt}, headers=auth(REVIEWER)
    )
    assert response.status_code == 200, response.text
    return response.text, json.loads(response.headers.get("x-planwright-warnings") or "[]")


def test_credentials_are_stored_without_secrets(client: TestClient) -> None:
    project_id = create_workflow(client, CODED_REFERRAL_DOC)["project_id"]
    empty = client.get(f"/v1/projects/{project_id}/credentials", headers=auth(REVIEWER))
    assert empty.status_code == 200 and empty.json() == {"credentials": []}

    secret = dict(PORTAL, fields={"baseUrl": "https://payer.example", "password": "hunter2"})
    refused = _put(client, project_id, [secret])
    assert refused.status_code == 422
    assert "hunter2" not in refused.text
    assert _put(client, project_id, [PORTAL, PORTAL]).status_code == 422
    assert _put(client, project_id, [PORTAL], token=REVIEWER).status_code == 403

    saved = _put(client, project_id, [PORTAL, SANDBOX])
    assert saved.status_code == 200, saved.text
    again = client.get(f"/v1/projects/{project_id}/credentials", headers=auth(REVIEWER)).json()
    assert again == {"credentials": [PORTAL, {**SANDBOX, "owner": None, "fields": {}}]}
    missing = client.get("/v1/projects/nope/credentials", headers=auth(EDITOR))
    assert missing.status_code == 404


def test_chat_attaches_a_project_credential_and_the_exports_carry_it(
    client: TestClient, model: ScriptedModel
) -> None:
    workflow = create_workflow(client, CODED_REFERRAL_DOC)
    assert _put(client, workflow["project_id"], [PORTAL, SANDBOX]).status_code == 200
    session = create_session(client, workflow["id"])

    _, warnings = _export(client, workflow["id"], "cli")
    assert any("'Fetch referral' calls get('/referrals')" in w for w in warnings), warnings

    model.push(
        S.tool_calls(("attach_credential", {"credential": "payer", "adaptor": "http"})),
        S.tool_calls(("attach_credential", {"credential": "payer-portal", "adaptor": "http"})),
        S.text("Attached."),
        S.tool_calls(("attach_credential", {"credential": "fhir-sandbox", "job_keys": ["check"]})),
        S.text("Attached."),
    )
    with connect(client, session["id"]) as ws:
        ws.send_json(turn("use the payer-portal credential for the http steps"))
        until(ws, "turn.completed")
        ws.send_json(turn("check coverage should use credential fhir-sandbox"))
        until(ws, "turn.completed")
    # The first call named a credential the project does not hold: refused, listing them.
    refusal = model.requests[1].messages[-1]["content"][0]
    assert refusal["is_error"] and "unknown_credential" in refusal["content"]
    assert "'payer-portal', 'fhir-sandbox'" in refusal["content"]

    lightning, warnings = _export(client, workflow["id"], "lightning")
    project = YAML(typ="safe").load(lightning)
    assert project["credentials"] == {
        "ana@clinic.example|payer-portal": {"name": "payer-portal", "owner": "ana@clinic.example"}
    }
    jobs = project["workflows"]["referral-intake"]["jobs"]
    assert jobs["fetch-referral"]["credential"] == "ana@clinic.example|payer-portal"
    assert jobs["check-coverage"]["credential"] == "fhir-sandbox"
    # fhir-sandbox has no baseUrl and no owner: both are said.
    assert any("its credential 'fhir-sandbox' has no baseUrl" in w for w in warnings), warnings
    assert any("Credential 'fhir-sandbox' has no owner" in w for w in warnings), warnings
    assert not any("Fetch referral" in w for w in warnings), warnings

    cli, _ = _export(client, workflow["id"], "cli")
    steps = {s["id"]: s for s in json.loads(cli)["steps"]}
    assert steps["fetch-referral"]["configuration"] == "payer-portal"
    assert steps["check-coverage"]["configuration"] == "fhir-sandbox"


def test_secrets_in_names_and_urls_and_unknown_schemas_or_owners_are_422(
    client: TestClient,
) -> None:
    project_id = create_workflow(client, CODED_REFERRAL_DOC)["project_id"]
    for change in (
        {"fields": {"baseUrl": "https://payer.example", "pwd": "hunter2"}},
        {"fields": {"baseUrl": "https://payer.example", "key": "hunter2"}},
        {"fields": {"baseUrl": "https://payer.example/?api_key=hunter2"}},
        {"fields": {"baseUrl": "https://svc:hunter2@payer.example"}},
        {"schema": "nope"},
        {"owner": "not an email"},
        {"name": "payer|portal"},
    ):
        refused = _put(client, project_id, [{**PORTAL, **change}])
        assert refused.status_code == 422, (change, refused.text)
        assert refused.json()["error"]["code"] == "invalid_request"
        assert "hunter2" not in refused.text
    assert _put(client, project_id, [PORTAL]).status_code == 200


def test_credentials_stored_under_older_rules_still_read(client: TestClient) -> None:
    project_id = create_workflow(client, CODED_REFERRAL_DOC)["project_id"]
    old = {"name": "a|b", "schema": "nope", "owner": "me", "fields": {"pwd": "x"}}
    kept = ProjectCredentials.model_validate({"credentials": [old]}, context={STORED: True})
    store = client.app.state.services.store  # type: ignore[attr-defined]
    client.portal.call(store.save_credentials, project_id, kept)  # type: ignore[union-attr]
    read = client.get(f"/v1/projects/{project_id}/credentials", headers=auth(REVIEWER))
    assert read.status_code == 200, read.text
    assert read.json() == {"credentials": [old]}
