"""Export and import in OpenFn's formats over REST: yaml, lightning, cli."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from ruamel.yaml import YAML

from tests.app.service.helpers import EDITOR, REVIEWER, TWO_WORKFLOWS, auth, create_workflow
from tests.documents import REFERRAL_WITH_WEBHOOK


def _export(client: TestClient, workflow_id: str, fmt: str) -> tuple[int, str, dict[str, str]]:
    response = client.get(
        f"/v1/workflows/{workflow_id}/export", params={"format": fmt}, headers=auth(REVIEWER)
    )
    return response.status_code, response.text, dict(response.headers)


def _import(client: TestClient, fmt: str, content: str) -> tuple[int, dict]:
    response = client.post(
        "/v1/workflows/import", json={"format": fmt, "content": content}, headers=auth(EDITOR)
    )
    return response.status_code, response.json()


def _count(client: TestClient) -> int:
    return len(client.get("/v1/workflows", headers=auth(EDITOR)).json())


def test_export_in_each_format(client: TestClient) -> None:
    workflow = create_workflow(client, REFERRAL_WITH_WEBHOOK)
    status, text, headers = _export(client, workflow["id"], "yaml")
    assert (status, text) == (200, REFERRAL_WITH_WEBHOOK)

    status, text, headers = _export(client, workflow["id"], "lightning")
    assert status == 200 and headers["content-type"].startswith("application/yaml")
    assert 'filename="project.yaml"' in headers["content-disposition"]
    project = YAML(typ="safe").load(text)
    assert project["credentials"] == {}
    (wf,) = project["workflows"].values()
    assert list(project["workflows"]) == ["referral-intake"]
    assert list(wf["jobs"]) == ["fetch-referral", "check-coverage"]
    assert list(wf["edges"]) == ["webhook->fetch-referral", "fetch-referral->check-coverage"]
    assert "id" not in wf["jobs"]["fetch-referral"]  # Lightning's project.yaml carries no ids

    status, text, headers = _export(client, workflow["id"], "cli")
    assert status == 200 and headers["content-type"].startswith("application/json")
    cli = json.loads(text)
    assert cli["start"] == "webhook"
    assert [s["id"] for s in cli["steps"]] == ["webhook", "fetch-referral", "check-coverage"]


def test_unknown_format_is_rejected(client: TestClient) -> None:
    workflow = create_workflow(client)
    status, _, _ = _export(client, workflow["id"], "xml")
    assert status == 422


def test_export_openfn_cannot_take_names_the_field(client: TestClient) -> None:
    clash = REFERRAL_WITH_WEBHOOK.replace("name: Check coverage", "name: Fetch_referral").replace(
        "name: Fetch referral", "name: fetch referral"
    )
    clash = clash.replace("name: Fetch_referral", "name: Fetch  Referral")
    workflow = create_workflow(client, clash)
    response = client.get(
        f"/v1/workflows/{workflow['id']}/export?format=cli", headers=auth(REVIEWER)
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "export_id_clash"
    assert error["field"] == "jobs.check"


def test_import_a_project_makes_one_workflow_per_project_workflow(client: TestClient) -> None:
    before = _count(client)
    status, body = _import(client, "lightning", TWO_WORKFLOWS)
    assert status == 201, body
    intake, digest = body["workflows"]
    assert (intake["name"], digest["name"]) == ("Intake", "Digest")
    assert _count(client) == before + 2
    doc = YAML(typ="safe").load(intake["yaml"])
    job = doc["jobs"]["Fetch-referral"]
    assert (job["credential"], job["body"]) == ("clinic-api", "get('/referrals');\n")
    assert doc["triggers"]["webhook"]["webhook_reply"] == "after_completion"
    cron = YAML(typ="safe").load(digest["yaml"])
    assert cron["triggers"]["cron"]["cron_cursor_job_id"] == cron["jobs"]["send"]["id"]
    versions = client.get(f"/v1/workflows/{intake['id']}/versions", headers=auth(EDITOR)).json()
    assert [(v["tool"], v["summary"]) for v in versions] == [("import", "Imported (lightning)")]


def test_import_of_the_cli_export_gives_the_same_workflow(client: TestClient) -> None:
    workflow = create_workflow(client, REFERRAL_WITH_WEBHOOK)
    _, exported, _ = _export(client, workflow["id"], "cli")
    status, body = _import(client, "cli", exported)
    assert status == 201, body
    (imported,) = body["workflows"]
    _, again, _ = _export(client, imported["id"], "cli")
    assert json.loads(again) == json.loads(exported)
    status, body = _import(client, "yaml", REFERRAL_WITH_WEBHOOK)
    assert status == 201 and body["workflows"][0]["yaml"] == REFERRAL_WITH_WEBHOOK


def test_bad_import_names_the_field_and_creates_nothing(client: TestClient) -> None:
    before = _count(client)
    broken = TWO_WORKFLOWS.replace("target_job: send", "target_job: sned")
    status, body = _import(client, "lightning", broken)
    assert status == 422
    assert body["error"]["code"] == "invalid_import"
    assert body["error"]["field"] == "workflows.digest.edges.cron->send.target_job"
    assert "'sned'" in body["error"]["message"]
    assert _count(client) == before  # the first workflow, which was fine, is not created

    status, body = _import(client, "cli", '{"steps": [{"id": "a", "adaptors": []}]}')
    assert (status, body["error"]["field"]) == (422, "steps[0].adaptors")
    status, body = _import(client, "cli", "{nope")
    assert (status, body["error"]["code"]) == (422, "invalid_json")
    assert _count(client) == before


def test_reviewers_cannot_import(client: TestClient) -> None:
    response = client.post(
        "/v1/workflows/import",
        json={"format": "lightning", "content": TWO_WORKFLOWS},
        headers=auth(REVIEWER),
    )
    assert response.status_code == 403


DEPLOY_SPEC = """\
name: lab-project
description: Lab results for the district
channels:
  feed: {name: feed, sink_url: 'https://sink.example.org/in'}
workflows:
  lab-results:
    name: Lab results
    jobs:
      fetch:
        name: Fetch
        adaptor: '@openfn/language-http@7.2.10'
        body: {path: jobs/fetch.js}
    triggers:
      trigger-one: {type: cron, cron_expression: '0 6 * * *'}
    edges:
      trigger-one->fetch: {source_trigger: trigger-one, target_job: fetch, condition_type: always}
"""


def test_import_reads_body_files_and_re_exports_what_it_kept(client: TestClient) -> None:
    missing = client.post(
        "/v1/workflows/import",
        json={"format": "lightning", "content": DEPLOY_SPEC},
        headers=auth(EDITOR),
    )
    assert missing.status_code == 422
    assert missing.json()["error"]["field"] == "workflows.lab-results.jobs.fetch.body.path"

    response = client.post(
        "/v1/workflows/import",
        json={
            "format": "lightning",
            "content": DEPLOY_SPEC,
            "files": {"jobs/fetch.js": "get('results');"},
        },
        headers=auth(EDITOR),
    )
    assert response.status_code == 201, response.text
    (workflow,) = response.json()["workflows"]
    status, text, _ = _export(client, workflow["id"], "lightning")
    assert status == 200
    project = YAML(typ="safe").load(text)
    assert (project["name"], project["description"]) == (
        "lab-project",
        "Lab results for the district",
    )
    assert project["channels"]["feed"]["sink_url"] == "https://sink.example.org/in"
    wf = project["workflows"]["lab-results"]
    assert wf["jobs"]["fetch"]["body"] == "get('results');"
    assert list(wf["triggers"]) == ["trigger-one"] and wf["triggers"]["trigger-one"]["enabled"]
    assert wf["edges"]["trigger-one->fetch"]["enabled"] is True
