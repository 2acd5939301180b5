"""The live view WebSocket and slow clients."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocket

from agents.models import ScriptedModel
from app.ws.connection import SLOW_CLIENT, Connection
from tests.app.service.helpers import (
    DOC,
    EDITOR,
    auth,
    connect,
    create_session,
    create_workflow,
    turn,
    until,
    watch,
)

S = ScriptedModel


def _rename(client: TestClient, workflow_id: str, version: int, name: str) -> None:
    response = client.put(
        f"/v1/workflows/{workflow_id}",
        json={"yaml": DOC.replace("Referral intake", name), "expected_version": version},
        headers=auth(EDITOR),
    )
    assert response.status_code == 200, response.text


def test_watcher_gets_the_document_then_each_change(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(
        S.tool_calls(("update_workflow", {"name": "Intake"})),
        S.tool_calls(("update_jobs", {"jobs": [{"key": "check", "name": "Verify"}]})),
        S.text("Done."),
    )
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"])
    with watch(client, workflow["id"]) as watcher:
        first = watcher.receive_json()
        assert first["type"] == "workflow" and first["version"] == 1 and first["yaml"] == DOC
        with connect(client, session["id"]) as chat:
            chat.send_json(turn("rename things"))
            until(chat, "turn.completed")
        second, third = watcher.receive_json(), watcher.receive_json()
    assert [second["version"], third["version"]] == [2, 3]
    assert "name: Intake" in second["yaml"] and "name: Verify" in third["yaml"]
    assert [first["seq"], second["seq"], third["seq"]] == [1, 2, 3]


def test_rest_changes_reach_watchers_and_chat_sockets(client: TestClient) -> None:
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"])
    with watch(client, workflow["id"]) as watcher, connect(client, session["id"]) as chat:
        watcher.receive_json()
        _rename(client, workflow["id"], 1, "Renamed by REST")
        assert watcher.receive_json()["version"] == 2
        pushed = chat.receive_json()
        assert pushed["type"] == "workflow" and pushed["version"] == 2


def test_a_chat_socket_follows_its_workflow_before_its_handshake_completes(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change committed once the client's connect has returned reaches the chat socket:
    it subscribed before accepting (it used to accept first, so a REST change made right
    after connecting could be published before it listened, and never came)."""
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"])
    order: list[str] = []
    bus = client.app.state.services.bus  # type: ignore[attr-defined]
    subscribe = bus.subscribe

    async def recorded_subscribe(workflow_id: str, **options: Any) -> Any:
        subscription = await subscribe(workflow_id, **options)
        order.append(f"subscribed to {workflow_id}")
        return subscription

    accept = WebSocket.accept

    async def recorded_accept(self: WebSocket, *args: Any, **kwargs: Any) -> None:
        order.append("accepted")
        await accept(self, *args, **kwargs)

    monkeypatch.setattr(bus, "subscribe", recorded_subscribe)
    monkeypatch.setattr(WebSocket, "accept", recorded_accept)
    with connect(client, session["id"]) as chat:
        assert order == [f"subscribed to {workflow['id']}", "accepted"]
        _rename(client, workflow["id"], 1, "Renamed right after connecting")
        pushed = chat.receive_json()
    assert pushed["type"] == "workflow" and pushed["version"] == 2
    assert "Renamed right after connecting" in pushed["yaml"]


def test_reconnecting_watcher_catches_up_from_its_last_version(client: TestClient) -> None:
    workflow = create_workflow(client)
    wid = workflow["id"]
    _rename(client, wid, 1, "Two")
    _rename(client, wid, 2, "Three")
    with watch(client, wid, since=1) as watcher:
        versions = [watcher.receive_json()["version"], watcher.receive_json()["version"]]
    assert versions == [2, 3]


def test_watcher_already_current_gets_nothing_until_a_change(client: TestClient) -> None:
    workflow = create_workflow(client)
    wid = workflow["id"]
    with watch(client, wid, since=1) as watcher:
        _rename(client, wid, 1, "Two")
        frame = watcher.receive_json()
    assert frame["version"] == 2


def test_watch_unknown_workflow(client: TestClient) -> None:
    with watch(client, "nope") as watcher:
        assert watcher.receive_json()["code"] == "not_found"


class _StuckSocket:
    """A client that never reads: every send blocks forever."""

    application_state = None
    closed_with: int | None = None

    async def send_text(self, frame: str) -> None:
        await asyncio.Event().wait()

    async def close(self, code: int, reason: str) -> None:
        self.closed_with = code


async def test_a_slow_client_is_closed_without_blocking_the_sender() -> None:
    socket = _StuckSocket()
    async with Connection(socket, queue_size=4) as connection:  # type: ignore[arg-type]
        for version in range(1, 10):
            await asyncio.wait_for(
                connection.send({"type": "workflow", "version": version}), timeout=1
            )
    assert socket.closed_with == SLOW_CLIENT
    assert connection.closed
