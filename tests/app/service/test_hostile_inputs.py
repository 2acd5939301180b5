"""Inputs that once reached the database as 500s: NUL characters anywhere a client
types text, and versions at the edge of the schema's int32 columns."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.api.schemas import MAX_VERSION
from tests.app.service.helpers import DOC, EDITOR, REVIEWER, auth, create_session, create_workflow
from tests.documents import REFERRAL_PROJECT

NUL = quote("\x00")


def test_nul_in_a_path_id_is_422_not_500(client: TestClient) -> None:
    workflow_id = create_workflow(client)["id"]
    session_id = create_session(client, workflow_id)["id"]
    bad = f"x{NUL}y"
    responses = {
        "workflow": client.get(f"/v1/workflows/{bad}", headers=auth(EDITOR)),
        "export": client.get(f"/v1/workflows/{bad}/export", headers=auth(EDITOR)),
        "versions": client.get(f"/v1/workflows/{bad}/versions", headers=auth(EDITOR)),
        "version": client.get(f"/v1/workflows/{bad}/versions/1", headers=auth(EDITOR)),
        "put": client.put(
            f"/v1/workflows/{bad}", json={"yaml": DOC, "expected_version": 1}, headers=auth(EDITOR)
        ),
        "revert": client.post(
            f"/v1/workflows/{bad}/revert", json={"version": 1}, headers=auth(EDITOR)
        ),
        "session": client.get(f"/v1/sessions/{bad}", headers=auth(EDITOR)),
        "session body": client.post(
            "/v1/sessions", json={"workflow_id": workflow_id + "\x00"}, headers=auth(EDITOR)
        ),
    }
    assert {k: r.status_code for k, r in responses.items()} == dict.fromkeys(responses, 422)
    assert client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).status_code == 200


def test_nul_in_a_name_is_422(client: TestClient) -> None:
    for body in ({"name": "a\x00b"}, {"name": "a\x00b", "yaml": DOC}):
        response = client.post("/v1/workflows", json=body, headers=auth(EDITOR))
        assert response.status_code == 422, response.text
    # A NUL spelled as a YAML escape: the document could never be stored and loaded again.
    with_nul = DOC.replace("name: Referral intake", 'name: "Referral\\0intake"')
    assert with_nul != DOC
    for response in (
        client.post("/v1/workflows", json={"yaml": with_nul}, headers=auth(EDITOR)),
        client.put(
            f"/v1/workflows/{create_workflow(client)['id']}",
            json={"yaml": with_nul, "expected_version": 1},
            headers=auth(EDITOR),
        ),
    ):
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "invalid_character"


# JSON can spell an unpaired surrogate ("\ud800"); no database can store one.
SURROGATE = '"x\\ud800"'


def _raw(client: TestClient, method: str, path: str, body: str) -> int:
    headers = {**auth(EDITOR), "content-type": "application/json"}
    return client.request(method, path, content=body.encode(), headers=headers).status_code


def test_an_unpaired_surrogate_anywhere_in_a_body_is_422_not_500(client: TestClient) -> None:
    workflow_id = create_workflow(client)["id"]
    bodies = {
        ("POST", "/v1/workflows", "yaml"): '{"yaml": %s}',
        ("POST", "/v1/workflows", "name"): '{"name": %s}',
        ("POST", "/v1/workflows", "project_id"): '{"project_id": %s}',
        ("POST", "/v1/sessions", "workflow_id"): '{"workflow_id": %s}',
        ("POST", "/v1/sessions", "project_id"): '{"project_id": %s}',
        ("PUT", f"/v1/workflows/{workflow_id}", "yaml"): '{"yaml": %s, "expected_version": 1}',
        ("POST", "/v1/workflows/import", "content"): '{"format": "yaml", "content": %s}',
    }
    statuses = {
        where: _raw(client, where[0], where[1], body % SURROGATE) for where, body in bodies.items()
    }
    assert statuses == dict.fromkeys(bodies, 422)


def test_nul_or_a_surrogate_spelled_in_yaml_is_refused_wherever_it_is(client: TestClient) -> None:
    """A step key, a value or a name: a document holding one could be accepted, but
    every later commit of it (its summary names the key) would fail on Postgres."""
    for spelled in ("\\0", "\\ud800"):
        for yaml in (
            DOC.replace("  fetch:", f'  "fe{spelled}tch":', 1),
            DOC.replace("name: Referral intake", f'name: "Referral{spelled}"', 1),
        ):
            assert yaml != DOC
            for path, body in (
                ("/v1/workflows", {"yaml": yaml}),
                ("/v1/workflows/import", {"format": "yaml", "content": yaml}),
            ):
                response = client.post(path, json=body, headers=auth(EDITOR))
                assert response.status_code == 422, (path, yaml, response.text)
                assert response.json()["error"]["code"] == "invalid_character"


def test_a_lightning_projects_name_follows_the_name_rules_on_import(client: TestClient) -> None:
    hostile = REFERRAL_PROJECT.replace("name: Referral programme", 'name: "Ref\\u202eerral"', 1)
    assert hostile != REFERRAL_PROJECT
    response = client.post(
        "/v1/workflows/import",
        json={"format": "lightning", "content": hostile},
        headers=auth(EDITOR),
    )
    assert response.status_code == 201, response.text
    project_id = response.json()["workflows"][0]["project_id"]
    project = client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()
    assert project["name"] == "Referral"


def test_rest_names_follow_the_tools_name_rules(client: TestClient) -> None:
    """An RTL override or control characters would make a name display as
    something else; the tools replace them, and so does REST."""
    hostile = "Pay\u202eroll\u0007 \u200f\tintake\x1b[31m"
    for body in ({"name": hostile}, {"name": hostile, "yaml": DOC}):
        response = client.post("/v1/workflows", json=body, headers=auth(EDITOR))
        assert response.status_code == 201, response.text
        assert response.json()["name"] == "Payroll intake 31m"
        assert f"name: {response.json()['name']}" in response.json()["yaml"]
    yaml = DOC.replace("name: Referral intake", 'name: "Referral\\u202e intake"')
    imported = client.post("/v1/workflows", json={"yaml": yaml}, headers=auth(EDITOR)).json()
    assert imported["name"] == "Referral intake"
    through_import = client.post(
        "/v1/workflows/import", json={"format": "yaml", "content": yaml}, headers=auth(EDITOR)
    )
    assert through_import.status_code == 201, through_import.text
    assert [w["name"] for w in through_import.json()["workflows"]] == ["Referral intake"]
    for unusable in ("\u202e\u0007", "   "):
        response = client.post("/v1/workflows", json={"name": unusable}, headers=auth(EDITOR))
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "invalid_name"


def test_expected_version_at_the_int32_maximum_is_a_conflict_not_an_overflow(
    client: TestClient,
) -> None:
    workflow_id = create_workflow(client)["id"]
    changed = DOC.replace("name: Referral intake", "name: Referral intake 2", 1)
    for expected in (MAX_VERSION, MAX_VERSION - 1):  # a change: identical text is `unchanged`
        response = client.put(
            f"/v1/workflows/{workflow_id}",
            json={"yaml": changed, "expected_version": expected},
            headers=auth(EDITOR),
        )
        assert response.status_code in (409, 422), response.text
    over = client.put(
        f"/v1/workflows/{workflow_id}",
        json={"yaml": DOC, "expected_version": MAX_VERSION + 1},
        headers=auth(EDITOR),
    )
    assert over.status_code == 422
    for version in (MAX_VERSION, MAX_VERSION + 1, 2**63):
        got = client.get(f"/v1/workflows/{workflow_id}/versions/{version}", headers=auth(EDITOR))
        assert got.status_code in (404, 422), got.text
        reverted = client.post(
            f"/v1/workflows/{workflow_id}/revert", json={"version": version}, headers=auth(EDITOR)
        )
        assert reverted.status_code in (404, 422), reverted.text


def test_nul_in_a_websocket_path_id_is_refused(client: TestClient) -> None:
    for path in (f"/v1/sessions/x{NUL}y/ws", f"/v1/workflows/x{NUL}y/watch"):
        with client.websocket_connect(f"{path}?token={EDITOR}") as ws:
            frame = ws.receive_json()
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
        assert (frame["type"], frame["code"]) == ("error", "invalid_request")
        assert closed.value.code == 4400


def test_an_unnamed_tokens_author_label_reveals_nothing_about_the_token(
    app_client: Callable[..., TestClient],
) -> None:
    """Reviewers read version authors: an unsalted digest prefix there would let
    them confirm a guessed token offline. The label is keyed, and stable."""
    first = app_client()
    workflow_id = create_workflow(first)["id"]
    author = first.get(f"/v1/workflows/{workflow_id}/versions", headers=auth(REVIEWER)).json()[0][
        "author"
    ]
    digest = hashlib.sha256(EDITOR.encode()).hexdigest()
    assert author.startswith("editor-")
    assert not any(digest[i : i + 8] in author for i in range(len(digest) - 7))
    assert EDITOR not in author
    again = app_client()  # a restart, or another worker: the same label
    other = create_workflow(again)["id"]
    versions = again.get(f"/v1/workflows/{other}/versions", headers=auth(EDITOR)).json()
    assert versions[0]["author"] == author
    keyed = app_client(identity_key="a-configured-secret-key")
    third = create_workflow(keyed)["id"]
    relabelled = keyed.get(f"/v1/workflows/{third}/versions", headers=auth(EDITOR)).json()
    assert relabelled[0]["author"].startswith("editor-")
    assert relabelled[0]["author"] != author


def test_a_version_must_be_a_number_not_true_or_text(client: TestClient) -> None:
    workflow_id = create_workflow(client)["id"]
    for version in (True, "1", 1.0):
        put = client.put(
            f"/v1/workflows/{workflow_id}",
            json={"yaml": DOC, "expected_version": version},
            headers=auth(EDITOR),
        )
        assert put.status_code == 422, (version, put.text)
        reverted = client.post(
            f"/v1/workflows/{workflow_id}/revert", json={"version": version}, headers=auth(EDITOR)
        )
        assert reverted.status_code == 422, (version, reverted.text)
    assert client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()["version"] == 1
