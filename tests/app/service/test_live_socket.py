"""Through a real uvicorn server on loopback: what the in-process client cannot
show (the server's own read loop against a fast client, uvicorn's access log)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from uvicorn.logging import AccessFormatter
from websockets.sync.client import connect

from app.main import create_app
from tests.app.service.helpers import EDITOR, make_settings
from tests.e2e.server import free_port
from tests.waiting import wait_until

BURST = 300


class Live:
    def __init__(self, port: int) -> None:
        self.http = f"http://127.0.0.1:{port}"
        self.ws = f"ws://127.0.0.1:{port}"

    def post(self, path: str, body: dict[str, object]) -> dict[str, str]:
        response = httpx.post(
            self.http + path, json=body, headers={"Authorization": f"Bearer {EDITOR}"}
        )
        response.raise_for_status()
        result: dict[str, str] = response.json()
        return result


@pytest.fixture
def live(tmp_path: Path, database_url: str) -> Iterator[Live]:
    app = create_app(make_settings(tmp_path, database_url))
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    wait_until(
        lambda: server.started or not thread.is_alive(),
        timeout=30,
        message="the server did not start",
    )
    assert server.started, "the server thread died while starting"
    try:
        yield Live(port)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_a_burst_of_frames_gets_every_reply_and_the_socket_stays_open(live: Live) -> None:
    workflow = live.post("/v1/workflows", {"name": "Burst"})
    session = live.post("/v1/sessions", {"workflow_id": workflow["id"]})
    url = f"{live.ws}/v1/sessions/{session['id']}/ws?token={EDITOR}"
    with connect(url, max_queue=None) as ws:
        cancel = json.dumps({"type": "cancel"})
        for _ in range(BURST):  # each gets an error reply: no turn is running
            ws.send(cancel)
        replies = [json.loads(ws.recv(timeout=10)) for _ in range(BURST)]
        assert [r.get("code") for r in replies] == ["no_turn"] * BURST
        assert [r["seq"] for r in replies] == list(range(1, BURST + 1))
        ws.send(json.dumps({"type": "cancel"}))
        assert json.loads(ws.recv(timeout=10))["code"] == "no_turn"  # still open


class _Capture(logging.Handler):
    """uvicorn's own access formatter; a formatting error is kept, not printed."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s'))
        self.out = io.StringIO()
        self.errors: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.out.write(self.format(record) + "\n")
        except Exception as exc:
            self.errors.append(exc)


def test_a_token_in_any_url_is_masked_in_the_access_log(live: Live) -> None:
    handler = _Capture()
    access = logging.getLogger("uvicorn.access")
    access.addHandler(handler)
    level = access.level
    access.setLevel(logging.INFO)
    try:
        secret = "leaky-token-0123456789"
        for path in (f"/healthz?token={secret}", f"/v1/workflows?x=1&token={secret}&y=2"):
            httpx.get(live.http + path, headers={"Authorization": f"Bearer {EDITOR}"})
        wait_until(  # the access line is written after the response is sent
            lambda: (
                handler.errors
                or all(p in handler.out.getvalue() for p in ("/healthz?", "/v1/workflows?x=1"))
            ),
            timeout=10,
            message=lambda: f"two access lines never came: {handler.out.getvalue()!r}",
        )
    finally:
        access.removeHandler(handler)
        access.setLevel(level)
    assert handler.errors == []
    log = handler.out.getvalue()
    assert secret not in log
    assert "/healthz?token=[redacted]" in log
    assert "/v1/workflows?x=1&token=[redacted]&y=2" in log
