"""Every error answer has one shape, ``{"error": {"code", "message"}}``, the
framework's own refusals included; a socket with a bad query parameter is told so in
an ``error`` frame and closed with 4400, never refused at the handshake."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from tests.app.service.helpers import EDITOR, auth, create_session, create_workflow

JSON = {**auth(EDITOR), "content-type": "application/json"}


def _error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"yaml": "\xff\xfe"}',
        b"\xff\xfe",
    ],
    ids=["unparsable", "100k-deep", "invalid-utf8-in-string", "invalid-utf8"],
)
def test_a_body_that_is_not_json_is_400_in_the_error_shape(client: TestClient, body: bytes) -> None:
    workflow = create_workflow(client)
    for method, path in (
        ("POST", "/v1/workflows"),
        ("PUT", f"/v1/workflows/{workflow['id']}"),
        ("POST", "/v1/workflows/import"),
        ("POST", f"/v1/workflows/{workflow['id']}/revert"),
    ):
        response = client.request(method, path, content=body, headers=JSON)
        _error(response, 400, "invalid_json")


def test_an_unknown_path_is_404_in_the_error_shape(client: TestClient) -> None:
    _error(client.get("/no/such/path"), 404, "not_found")
    _error(client.get("/v1/workflows/x/nothing", headers=auth(EDITOR)), 404, "not_found")
    _error(client.get("/static/no-such-file.js"), 404, "not_found")


def test_a_wrong_method_is_405_in_the_error_shape(client: TestClient) -> None:
    response = client.delete("/v1/workflows", headers=auth(EDITOR))
    _error(response, 405, "method_not_allowed")
    assert response.headers["allow"]


def test_a_request_that_fails_validation_is_422_in_the_error_shape(client: TestClient) -> None:
    body = _error(
        client.post("/v1/workflows", json={"yaml": 5}, headers=auth(EDITOR)),
        422,
        "invalid_request",
    )
    assert "yaml" in body["error"]["message"]
    runs = f"/v1/workflows/{create_workflow(client)['id']}/runs?limit=0"
    _error(client.get(runs, headers=auth(EDITOR)), 422, "invalid_request")


def test_a_body_over_the_limit_is_413_in_the_error_shape(app_client: Any) -> None:
    client = app_client(max_body_bytes=2 * 1024 * 1024, max_yaml_bytes=1024 * 1024)
    big = b'{"yaml": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    _error(client.post("/v1/workflows", content=big, headers=JSON), 413, "body_too_large")


def _refused(client: TestClient, url: str) -> tuple[dict[str, Any], int, str]:
    with client.websocket_connect(url) as ws:
        frame = ws.receive_json()
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
    return frame, closed.value.code, closed.value.reason


@pytest.mark.parametrize("since", ["abc", "1.5", "1e30", "", "-1", "99999999999"])
def test_a_bad_since_version_gets_an_error_frame_and_4400(client: TestClient, since: str) -> None:
    workflow_id = create_workflow(client)["id"]
    url = f"/v1/workflows/{workflow_id}/watch?token={EDITOR}&since_version={since}"
    frame, code, reason = _refused(client, url)
    assert frame["type"] == "error" and frame["code"] == "invalid_request", frame
    assert "since_version" in frame["message"]
    assert code == 4400
    assert "since_version" in reason
    # A good one still works on the same workflow.
    with client.websocket_connect(f"/v1/workflows/{workflow_id}/watch?token={EDITOR}") as ws:
        assert ws.receive_json()["type"] == "workflow"


def test_a_bad_chat_socket_parameter_gets_an_error_frame_and_4400(client: TestClient) -> None:
    session_id = create_session(client, create_workflow(client)["id"])["id"]
    frame, code, _ = _refused(client, f"/v1/sessions/{'x' * 300}/ws?token={EDITOR}")
    assert (frame["type"], frame["code"], code) == ("error", "invalid_request", 4400)
    with client.websocket_connect(f"/v1/sessions/{session_id}/ws?token={EDITOR}") as ws:
        ws.send_json({"type": "cancel"})
        assert ws.receive_json()["code"] == "no_turn"


def test_a_bad_parameter_with_a_bad_token_is_refused_for_the_token(client: TestClient) -> None:
    workflow_id = create_workflow(client)["id"]
    with (
        client.websocket_connect(
            f"/v1/workflows/{workflow_id}/watch?token=wrong&since_version=abc"
        ) as ws,
        pytest.raises(WebSocketDisconnect) as closed,
    ):
        ws.receive_json()
    assert closed.value.code == 1008  # as any wrong token: nothing about the parameter


@pytest.mark.parametrize("value", ["5", "7", "true", "abc"])
@pytest.mark.parametrize("section", ["jobs", "edges"])
def test_a_section_that_is_not_a_mapping_is_422_naming_it_on_every_route(
    client: TestClient, section: str, value: str
) -> None:
    """``jobs: 5`` (a number, a boolean, a string) is refused naming the field, on
    every route that takes a document: never a 500 from the job count."""
    workflow = client.post("/v1/workflows", json={"name": "w"}, headers=auth(EDITOR)).json()
    document = f"name: x\n{section}: {value}\n"
    project = f"name: P\nworkflows:\n  wf:\n    name: WF\n    {section}: {value}\n"
    for method, path, body, code, field in (
        ("POST", "/v1/workflows", {"yaml": document}, "invalid_field", section),
        (
            "PUT",
            f"/v1/workflows/{workflow['id']}",
            {"yaml": document, "expected_version": 1},
            "invalid_field",
            section,
        ),
        (
            "POST",
            "/v1/workflows/import",
            {"format": "yaml", "content": document},
            "invalid_field",
            section,
        ),
        (
            "POST",
            "/v1/workflows/import",
            {"format": "lightning", "content": project},
            "invalid_import",
            f"workflows.wf.{section}",
        ),
        (
            "POST",
            "/v1/projects",
            {"name": "p", "yaml": project},
            "invalid_import",
            f"workflows.wf.{section}",
        ),
    ):
        response = client.request(method, path, json=body, headers=auth(EDITOR))
        error = _error(response, 422, code)["error"]
        assert section in error["message"], (path, error)
        assert error["field"] == field, (path, error)
