"""The chat client's reconnect: a capped number of tries, waits doubling from the first
(tenacity), then either caught up or given up with a message."""

from __future__ import annotations

import asyncio
import io
import socket
from typing import Any

import httpx
import pytest
from websockets.asyncio.server import ServerConnection, serve

from app.client import frames as client_frames
from app.client.rest import Rest
from app.client.session import ChatClient
from app.client.terminal import LineReader, Output
from tests.client import frames


def _client(ws_url: str) -> tuple[ChatClient, io.StringIO]:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/workflows/w1":
            return httpx.Response(200, json={"id": "w1", "version": 3, "yaml": frames.DOC})
        return httpx.Response(200, json={"id": "s1", "pending_confirmation": None})

    rest = Rest(httpx.AsyncClient(base_url="http://test", transport=httpx.MockTransport(answer)))
    stdout = io.StringIO()
    client = ChatClient(
        rest=rest,
        out=Output(stdout),
        lines=LineReader(io.StringIO(""), asyncio.get_running_loop()),
        ws_url=ws_url,
        session_id="s1",
        workflow_id="w1",
        read_only=False,
        name="Referral intake",
        version=3,
        yaml=frames.DOC,
    )
    return client, stdout


def _counting_connect(monkeypatch: pytest.MonkeyPatch, refusals: int) -> list[str]:
    """Every try's URL; the first ``refusals`` tries are refused."""
    tries: list[str] = []
    real = client_frames.connect

    def connect(url: str, *args: Any, **kwargs: Any) -> Any:
        tries.append(url)
        if len(tries) <= refusals:
            raise ConnectionRefusedError("refused")
        return real(url, *args, **kwargs)

    monkeypatch.setattr(client_frames, "connect", connect)
    return tries


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_reconnecting_gives_up_after_its_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_frames, "RECONNECT_FIRST_S", 0.001)
    monkeypatch.setattr(client_frames, "RECONNECT_MAX_S", 0.004)
    tries = _counting_connect(monkeypatch, refusals=100)
    client, stdout = _client(f"ws://127.0.0.1:{_free_port()}/v1/sessions/s1/ws")
    client.in_turn = True
    await asyncio.wait_for(client.reconnect(), 10)
    assert len(tries) == client_frames.RECONNECT_ATTEMPTS
    assert client.ws is None
    assert client.fatal == "the connection to the server was lost"
    assert client.turn_events.get_nowait() == ("lost", {})  # the waiting turn hears it
    assert "Reconnected." not in stdout.getvalue()


async def test_reconnecting_after_refusals_catches_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_frames, "RECONNECT_FIRST_S", 0.001)
    monkeypatch.setattr(client_frames, "RECONNECT_MAX_S", 0.004)
    tries = _counting_connect(monkeypatch, refusals=2)

    async def handler(connection: ServerConnection) -> None:
        await connection.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        client, stdout = _client(f"ws://127.0.0.1:{port}/v1/sessions/s1/ws")
        client.version = 2  # the server is at v3: caught up after reconnecting
        await asyncio.wait_for(client.reconnect(), 10)
        assert client.ws is not None
        await client.ws.close()
    assert len(tries) == 3
    assert client.fatal is None
    assert "Reconnected." in stdout.getvalue()
    assert "Caught up to v3:" in stdout.getvalue()
