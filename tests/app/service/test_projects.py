"""Projects over REST, on SQLite and Postgres: create (empty or from a Lightning
project.yaml, all or nothing), list, read, export as one project.yaml; workflows
join projects; sessions on a project; roles as on the workflow routes."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from ruamel.yaml import YAML

from agents.models import ScriptedModel
from tests.app.service.helpers import DOC, EDITOR, REVIEWER, auth, create_workflow, until
from tests.documents import REFERRAL_PROJECT

NAMES = ["Referral intake", "Document verification", "Status transitions"]


def _load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


def _create(client: TestClient, body: dict[str, Any], token: str = EDITOR) -> dict[str, Any]:
    response = client.post("/v1/projects", json=body, headers=auth(token))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def _export(client: TestClient, project_id: str, token: str = EDITOR) -> str:
    response = client.get(
        f"/v1/projects/{project_id}/export", params={"format": "lightning"}, headers=auth(token)
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/yaml")
    assert 'filename="project.yaml"' in response.headers["content-disposition"]
    return response.text


def test_a_project_from_a_lightning_file_holds_all_its_workflows(client: TestClient) -> None:
    project = _create(client, {"yaml": REFERRAL_PROJECT})
    assert project["name"] == "Referral programme"  # the file's own name
    assert project["plan"] is None
    assert [w["name"] for w in project["workflows"]] == NAMES
    assert [w["position"] for w in project["workflows"]] == [0, 1, 2]
    assert all(w["version"] == 1 and w["problems"] == [] for w in project["workflows"])

    read = client.get(f"/v1/projects/{project['id']}", headers=auth(EDITOR)).json()
    assert [w["id"] for w in read["workflows"]] == [w["id"] for w in project["workflows"]]
    assert read["plan"] is None and read["name"] == "Referral programme"
    for summary in read["workflows"]:
        workflow = client.get(f"/v1/workflows/{summary['id']}", headers=auth(EDITOR)).json()
        assert workflow["project_id"] == project["id"]
        (version,) = client.get(
            f"/v1/workflows/{summary['id']}/versions", headers=auth(EDITOR)
        ).json()
        assert version["tool"] == "import" and version["author"]

    listed = client.get("/v1/projects", headers=auth(EDITOR)).json()
    assert [(p["id"], p["workflow_count"]) for p in listed] == [(project["id"], 3)]


def test_the_export_holds_every_workflow_step_edge_and_condition(client: TestClient) -> None:
    project = _create(client, {"name": "Renamed programme", "yaml": REFERRAL_PROJECT})
    exported = _load(_export(client, project["id"]))
    original = _load(REFERRAL_PROJECT)
    assert exported["name"] == "Renamed programme"
    # Keys, jobs, triggers, edges and conditions: what went in comes out, in order.
    assert exported["workflows"] == original["workflows"]
    assert list(exported["workflows"]) == list(original["workflows"])

    # And the export imports again as an equal project.
    again = _create(client, {"yaml": _export(client, project["id"])})
    assert again["name"] == "Renamed programme"
    assert _load(_export(client, again["id"]))["workflows"] == original["workflows"]


def test_one_bad_field_fails_the_whole_project(client: TestClient) -> None:
    broken = REFERRAL_PROJECT.replace(
        "        adaptor: '@openfn/language-common@latest'\n        body: fn(state => state)\n"
        "    triggers:\n      webhook:\n        type: webhook\n        enabled: true\n"
        "    edges:\n      webhook->record-status:",
        "        adaptor: ['@openfn/language-common@latest']\n        body: fn(state => state)\n"
        "    triggers:\n      webhook:\n        type: webhook\n        enabled: true\n"
        "    edges:\n      webhook->record-status:",
    )
    assert broken != REFERRAL_PROJECT
    response = client.post("/v1/projects", json={"yaml": broken}, headers=auth(EDITOR))
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["field"].startswith("workflows.status-transitions.jobs.")
    assert "adaptor" in error["message"]
    assert client.get("/v1/projects", headers=auth(EDITOR)).json() == []
    assert client.get("/v1/workflows", headers=auth(EDITOR)).json() == []

    not_yaml = client.post("/v1/projects", json={"yaml": "workflows: [1, 2]"}, headers=auth(EDITOR))
    assert not_yaml.status_code == 422
    assert not_yaml.json()["error"]["field"] == "workflows"


def test_an_empty_project_and_its_name_rules(client: TestClient) -> None:
    empty = _create(client, {"name": "Clinic – intake\u202e"})
    assert (empty["name"], empty["workflows"]) == ("Clinic - intake", [])
    assert _load(_export(client, empty["id"]))["workflows"] == {}
    untitled = _create(client, {})
    assert untitled["name"] == "Untitled project"
    bad = client.post("/v1/projects", json={"name": "!!!"}, headers=auth(EDITOR))
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_name"
    extra = client.post("/v1/projects", json={"title": "x"}, headers=auth(EDITOR))
    assert extra.status_code == 422


def test_workflows_join_a_project_or_get_their_own(client: TestClient) -> None:
    alone = create_workflow(client)
    own = client.get(f"/v1/projects/{alone['project_id']}", headers=auth(EDITOR)).json()
    assert (own["name"], [w["id"] for w in own["workflows"]]) == ("Referral intake", [alone["id"]])

    project = _create(client, {"name": "Programme"})
    for name in ("First", "Second"):
        added = client.post(
            "/v1/workflows",
            json={"name": name, "project_id": project["id"]},
            headers=auth(EDITOR),
        )
        assert added.status_code == 201, added.text
        assert added.json()["project_id"] == project["id"]
    imported = client.post(
        "/v1/workflows/import",
        json={"format": "yaml", "content": DOC, "project_id": project["id"]},
        headers=auth(EDITOR),
    )
    assert imported.status_code == 201, imported.text
    read = client.get(f"/v1/projects/{project['id']}", headers=auth(EDITOR)).json()
    assert [w["name"] for w in read["workflows"]] == ["First", "Second", "Referral intake"]
    summaries = {w["id"]: w for w in client.get("/v1/workflows", headers=auth(EDITOR)).json()}
    assert summaries[alone["id"]]["project_id"] == alone["project_id"]

    for path, body in (
        ("/v1/workflows", {"name": "X", "project_id": "nope"}),
        ("/v1/workflows/import", {"format": "yaml", "content": DOC, "project_id": "nope"}),
    ):
        missing = client.post(path, json=body, headers=auth(EDITOR))
        assert missing.status_code == 404, missing.text
        assert "nope" in missing.json()["error"]["message"]


def test_a_lightning_import_of_workflows_makes_one_project(client: TestClient) -> None:
    imported = client.post(
        "/v1/workflows/import",
        json={"format": "lightning", "content": REFERRAL_PROJECT},
        headers=auth(EDITOR),
    )
    assert imported.status_code == 201, imported.text
    (project_id,) = {w["project_id"] for w in imported.json()["workflows"]}
    project = client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()
    assert project["name"] == "Referral programme"
    assert [w["name"] for w in project["workflows"]] == NAMES


def test_workflows_that_would_share_a_key_cannot_be_exported_together(
    client: TestClient,
) -> None:
    project = _create(client, {"name": "Clash"})
    for name in ("Send report", "Send  report!"):
        created = client.post(
            "/v1/workflows", json={"name": name, "project_id": project["id"]}, headers=auth(EDITOR)
        )
        assert created.status_code == 201, created.text
    response = client.get(f"/v1/projects/{project['id']}/export", headers=auth(EDITOR))
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "export_id_clash" and "send-report" in error["message"]


def test_roles_and_tokens(client: TestClient) -> None:
    project = _create(client, {"yaml": REFERRAL_PROJECT})
    # Reviewers read and export ...
    assert client.get("/v1/projects", headers=auth(REVIEWER)).status_code == 200
    read = client.get(f"/v1/projects/{project['id']}", headers=auth(REVIEWER))
    assert read.status_code == 200
    assert len(_load(_export(client, project["id"], token=REVIEWER))["workflows"]) == 3
    # ... but create nothing.
    for path, body in (
        ("/v1/projects", {"name": "Mine"}),
        ("/v1/workflows", {"name": "Mine", "project_id": project["id"]}),
    ):
        refused = client.post(path, json=body, headers=auth(REVIEWER))
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "forbidden"
    assert len(client.get("/v1/projects", headers=auth(EDITOR)).json()) == 1
    # No token, no project.
    for path in ("/v1/projects", f"/v1/projects/{project['id']}"):
        assert client.get(path).status_code == 401
    assert client.post("/v1/projects", json={"name": "x"}).status_code == 401
    assert client.get(f"/v1/projects/{project['id']}/export").status_code == 401


def test_unknown_projects_and_formats(client: TestClient) -> None:
    for path in ("/v1/projects/nope", "/v1/projects/nope/export"):
        response = client.get(path, headers=auth(EDITOR))
        assert response.status_code == 404 and "nope" in response.json()["error"]["message"]
    project = _create(client, {"name": "P"})
    cli = client.get(
        f"/v1/projects/{project['id']}/export", params={"format": "cli"}, headers=auth(EDITOR)
    )
    assert cli.status_code == 422


def _session(client: TestClient, body: dict[str, Any], token: str = EDITOR) -> Any:
    return client.post("/v1/sessions", json={"read_only": False, **body}, headers=auth(token))


def test_sessions_on_a_project(client: TestClient) -> None:
    project = _create(client, {"yaml": REFERRAL_PROJECT})
    first, second, _ = (w["id"] for w in project["workflows"])

    opened = _session(client, {"project_id": project["id"]})
    assert opened.status_code == 201, opened.text
    session = opened.json()
    # Without a workflow it is a project session: its turns plan the whole project.
    assert (session["project_id"], session["workflow_id"]) == (project["id"], None)
    detail = client.get(f"/v1/sessions/{session['id']}", headers=auth(EDITOR)).json()
    assert (detail["project_id"], detail["workflow"]) == (project["id"], None)

    named = _session(client, {"project_id": project["id"], "workflow_id": second}).json()
    assert named["workflow_id"] == second
    detail = client.get(f"/v1/sessions/{named['id']}", headers=auth(EDITOR)).json()
    assert detail["workflow"]["id"] == second and detail["workflow"]["project_id"] == project["id"]

    reviewer = _session(client, {"project_id": project["id"]}, token=REVIEWER).json()
    assert reviewer["read_only"] is True

    plain = _session(client, {"workflow_id": first}).json()
    assert plain["project_id"] is None


def test_project_sessions_that_cannot_be_opened(client: TestClient) -> None:
    project = _create(client, {"yaml": REFERRAL_PROJECT})
    outside = create_workflow(client)
    wrong = _session(client, {"project_id": project["id"], "workflow_id": outside["id"]})
    assert wrong.status_code == 409 and wrong.json()["error"]["code"] == "workflow_not_in_project"

    empty = _create(client, {"name": "Empty"})
    opened = _session(client, {"project_id": empty["id"]})  # plan mode starts from nothing
    assert opened.status_code == 201 and opened.json()["workflow_id"] is None

    missing = _session(client, {"project_id": "nope"})
    assert missing.status_code == 404 and "nope" in missing.json()["error"]["message"]
    missing_wf = _session(client, {"project_id": project["id"], "workflow_id": "nope"})
    assert missing_wf.status_code == 404
    neither = _session(client, {})
    assert neither.status_code == 422
    assert "workflow_id or project_id" in neither.json()["error"]["message"]


def test_a_turn_on_a_project_session_edits_its_workflow(
    client: TestClient, model: ScriptedModel
) -> None:
    """A session opened on a project and one of its workflows edits that workflow."""
    model.push(
        ScriptedModel.tool_calls(
            ("update_jobs", {"jobs": [{"key": "fetch-referral", "name": "Pull referral"}]})
        ),
        ScriptedModel.text("Renamed Fetch referral to Pull referral."),
    )
    project = _create(client, {"yaml": REFERRAL_PROJECT})
    first, *others = (w["id"] for w in project["workflows"])
    session = _session(client, {"project_id": project["id"], "workflow_id": first}).json()
    frames: list[dict[str, Any]] = []
    with client.websocket_connect(f"/v1/sessions/{session['id']}/ws?token={EDITOR}") as ws:
        ws.send_json({"type": "turn", "content": "rename it", "context": {"page": "workflow"}})
        frames = until(ws, ("turn.completed", "error"))
    assert frames[-1]["type"] == "turn.completed", frames[-1]
    (workflow_frame,) = [f for f in frames if f["type"] == "workflow"]
    assert (workflow_frame["workflow_id"], workflow_frame["version"]) == (first, 2)
    read = client.get(f"/v1/projects/{project['id']}", headers=auth(EDITOR)).json()
    assert [w["version"] for w in read["workflows"]] == [2, 1, 1]
    assert [w["id"] for w in read["workflows"][1:]] == others
