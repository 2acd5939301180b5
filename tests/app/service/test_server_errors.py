"""An exception no handler expected is answered in the one error shape: 500
``internal_error``, nothing of the exception in the body, logged once with the
reference the answer carries; the next request is answered as usual. On the chat
socket a frame whose work fails gets an ``error`` frame and the socket stays open."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.deps import _principal
from tests.app.service.helpers import EDITOR, auth, connect, setup, turn, until

SECRET = "hunter2-in-the-exception"


def _broken() -> Any:  # no parameters: as a dependency it takes nothing from the request
    raise RuntimeError(f"boom: SELECT * FROM credentials WHERE password = '{SECRET}'")


async def _broken_async(*args: Any, **kwargs: Any) -> Any:
    _broken()


def test_an_unexpected_exception_is_500_internal_error_logged_once(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    services = client.app.state.services  # type: ignore[attr-defined]
    monkeypatch.setattr(services.store, "list_workflows", _broken_async)
    with caplog.at_level(logging.INFO):
        response = client.get("/v1/workflows", headers=auth(EDITOR))
    assert response.status_code == 500, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == "internal_error"
    for leaked in (SECRET, "boom", "RuntimeError", "SELECT", "Traceback"):
        assert leaked not in response.text
    reference = response.headers["x-request-id"]
    assert reference and reference in body["error"]["message"]
    logged = [r for r in caplog.records if r.exc_info is not None]
    assert len(logged) == 1, [r.getMessage() for r in logged]
    assert reference in logged[0].getMessage() and logged[0].levelno == logging.ERROR
    assert logged[0].exc_info is not None and logged[0].exc_info[0] is RuntimeError
    monkeypatch.undo()
    assert client.get("/v1/workflows", headers=auth(EDITOR)).status_code == 200


def test_an_exception_in_a_dependency_is_answered_the_same_way(client: TestClient) -> None:
    client.app.dependency_overrides[_principal] = _broken  # type: ignore[attr-defined]
    try:
        response = client.post("/v1/workflows", json={"name": "w"}, headers=auth(EDITOR))
    finally:
        client.app.dependency_overrides.clear()  # type: ignore[attr-defined]
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert SECRET not in response.text


@pytest.mark.parametrize("frame", ["turn", "run"])
def test_a_chat_frame_whose_work_fails_gets_an_error_frame_and_the_socket_stays(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, frame: str
) -> None:
    services = client.app.state.services  # type: ignore[attr-defined]
    monkeypatch.setattr(services.turns, "run", _broken_async)
    monkeypatch.setattr(services.runs, "on_socket", _broken_async)
    _, session_id = setup(client)
    sent = turn("hello") if frame == "turn" else {"type": "run", "input": {}}
    with connect(client, session_id) as ws:
        for _ in range(2):  # the same socket answers again after a failure
            ws.send_json(sent)
            error = until(ws, "error")[-1]
            assert error["code"] == "internal_error", error
            assert SECRET not in str(error) and "boom" not in str(error)
        ws.send_json({"type": "cancel"})
        assert until(ws, "error")[-1]["code"] == "no_turn"
