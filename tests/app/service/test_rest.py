"""REST API: workflows, versions, revert, sessions, auth and roles."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.app.service.helpers import (
    DOC,
    EDITOR,
    OTHER_EDITOR,
    REVIEWER,
    auth,
    create_session,
    create_workflow,
)


def test_create_empty_and_imported_workflows(client: TestClient) -> None:
    empty = client.post("/v1/workflows", json={"name": "Blank"}, headers=auth(EDITOR)).json()
    assert empty["name"] == "Blank" and empty["version"] == 1
    imported = create_workflow(client)
    assert imported["name"] == "Referral intake"
    assert imported["yaml"] == DOC
    fetched = client.get(f"/v1/workflows/{imported['id']}", headers=auth(REVIEWER)).json()
    assert fetched["yaml"] == DOC


def test_import_mints_missing_ids_and_lists_problems(client: TestClient) -> None:
    yaml = "name: W\njobs:\n  a:\n    name: A\n    adaptor: '@openfn/language-http@latest'\n"
    body = create_workflow(client, yaml)
    assert "id: " in body["yaml"]
    looped = DOC + "  check->fetch:\n    source_job: check\n    target_job: fetch\n"
    assert any("cycle" in p for p in create_workflow(client, looped)["problems"])


def test_hostile_or_mistyped_yaml_is_rejected_with_a_clear_error(client: TestClient) -> None:
    for yaml, code in [
        ("a: &x [1]\nb: *x\n", "yaml_alias_not_allowed"),
        ("jobs:\n  a:\n    name: 5\n    adaptor: x\n", "invalid_field"),
        ("- just\n- a list\n", "invalid_root"),
    ]:
        response = client.post("/v1/workflows", json={"yaml": yaml}, headers=auth(EDITOR))
        assert response.status_code == 422, yaml
        assert response.json()["error"]["code"] == code
    huge = "name: x\n" + "# padding\n" * 200_000
    response = client.post("/v1/workflows", json={"yaml": huge}, headers=auth(EDITOR))
    assert response.status_code == 413


def test_put_with_optimistic_version_and_conflict(client: TestClient) -> None:
    workflow = create_workflow(client)
    changed = DOC.replace("Referral intake", "Intake v2")
    ok = client.put(
        f"/v1/workflows/{workflow['id']}",
        json={"yaml": changed, "expected_version": 1},
        headers=auth(EDITOR),
    )
    assert ok.status_code == 200 and ok.json()["version"] == 2
    stale = client.put(
        f"/v1/workflows/{workflow['id']}",
        json={"yaml": DOC, "expected_version": 1},
        headers=auth(EDITOR),
    )
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "version_conflict"
    assert (
        client.get(f"/v1/workflows/{workflow['id']}", headers=auth(EDITOR)).json()["yaml"]
        == changed
    )


def test_versions_and_revert_make_a_new_version(client: TestClient) -> None:
    workflow = create_workflow(client)
    wid = workflow["id"]
    changed = DOC.replace("Referral intake", "Intake v2")
    client.put(
        f"/v1/workflows/{wid}", json={"yaml": changed, "expected_version": 1}, headers=auth(EDITOR)
    )
    versions = client.get(f"/v1/workflows/{wid}/versions", headers=auth(EDITOR)).json()
    assert [v["version"] for v in versions] == [2, 1]
    assert versions[0]["tool"] == "put"
    old = client.get(f"/v1/workflows/{wid}/versions/1", headers=auth(EDITOR)).json()
    assert old["yaml"] == DOC
    reverted = client.post(
        f"/v1/workflows/{wid}/revert", json={"version": 1}, headers=auth(EDITOR)
    ).json()
    assert reverted["version"] == 3 and reverted["yaml"] == DOC
    missing = client.post(f"/v1/workflows/{wid}/revert", json={"version": 9}, headers=auth(EDITOR))
    assert missing.status_code == 404


def test_export_returns_the_yaml(client: TestClient) -> None:
    workflow = create_workflow(client)
    response = client.get(f"/v1/workflows/{workflow['id']}/export", headers=auth(REVIEWER))
    assert response.status_code == 200
    assert response.text == DOC
    assert response.headers["content-type"].startswith("application/yaml")


def test_missing_or_wrong_token_is_401(client: TestClient) -> None:
    assert client.get("/v1/workflows").status_code == 401
    wrong = client.get("/v1/workflows", headers=auth("nope"))
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"] == "Bearer"


def test_reviewers_cannot_write_by_any_rest_path(client: TestClient) -> None:
    workflow = create_workflow(client)
    wid = workflow["id"]
    attempts = [
        client.post("/v1/workflows", json={"name": "x"}, headers=auth(REVIEWER)),
        client.put(
            f"/v1/workflows/{wid}",
            json={"yaml": DOC, "expected_version": 1},
            headers=auth(REVIEWER),
        ),
        client.post(f"/v1/workflows/{wid}/revert", json={"version": 1}, headers=auth(REVIEWER)),
    ]
    assert [a.status_code for a in attempts] == [403, 403, 403]
    assert client.get(f"/v1/workflows/{wid}", headers=auth(EDITOR)).json()["version"] == 1


def test_reviewer_sessions_are_read_only_whatever_they_ask(client: TestClient) -> None:
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"], token=REVIEWER, read_only=False)
    assert session["read_only"] is True


def test_sessions_belong_to_the_token_that_created_them(client: TestClient) -> None:
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"])
    mine = client.get(f"/v1/sessions/{session['id']}", headers=auth(EDITOR))
    assert mine.status_code == 200
    assert mine.json()["workflow"]["yaml"] == DOC
    theirs = client.get(f"/v1/sessions/{session['id']}", headers=auth(OTHER_EDITOR))
    assert theirs.status_code == 404


def test_unknown_ids_and_unknown_body_keys(client: TestClient) -> None:
    assert client.get("/v1/workflows/nope", headers=auth(EDITOR)).status_code == 404
    response = client.post("/v1/sessions", json={"workflow_id": "nope"}, headers=auth(EDITOR))
    assert response.status_code == 404
    extra = client.post("/v1/workflows", json={"name": "x", "owner": "me"}, headers=auth(EDITOR))
    assert extra.status_code == 422


def test_named_tokens_sign_their_versions(app_client) -> None:  # type: ignore[no-untyped-def]
    import json

    tokens = {"named-editor-token-0123": {"role": "editor", "name": "Ana"}}
    client = app_client(tokens=json.dumps(tokens))
    headers = {"Authorization": "Bearer named-editor-token-0123"}
    workflow = client.post("/v1/workflows", json={"yaml": DOC}, headers=headers).json()
    client.put(
        f"/v1/workflows/{workflow['id']}",
        json={"yaml": DOC.replace("Referral intake", "Intake"), "expected_version": 1},
        headers=headers,
    )
    versions = client.get(f"/v1/workflows/{workflow['id']}/versions", headers=headers).json()
    assert [v["author"] for v in versions] == ["Ana", "Ana"]
