"""The last answer (app/server_errors.py) on a bare ASGI app: an outage nothing
answered is 503 ``service_unavailable``; an exception after the response started is
left to the server (a second response cannot be sent); WebSockets pass through."""

from __future__ import annotations

import pytest
import redis.exceptions
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Receive, Scope, Send

from app.server_errors import ServerErrors


def _raising(exc: Exception, *, after_start: bool = False) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if after_start:
            await send({"type": "http.response.start", "status": 200, "headers": []})
        raise exc

    return app


def test_an_outage_that_escaped_every_handler_is_503() -> None:
    client = TestClient(ServerErrors(_raising(redis.exceptions.TimeoutError("slow"))))
    response = client.get("/")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"
    assert response.headers["x-request-id"]


def test_any_other_exception_is_500_internal_error() -> None:
    client = TestClient(ServerErrors(_raising(KeyError("secret-key-name"))))
    response = client.get("/")
    assert (response.status_code, response.json()["error"]["code"]) == (500, "internal_error")
    assert "secret-key-name" not in response.text


def test_an_exception_after_the_response_started_is_the_servers() -> None:
    client = TestClient(ServerErrors(_raising(ValueError("late"), after_start=True)))
    with pytest.raises(ValueError, match="late"):
        client.get("/")
