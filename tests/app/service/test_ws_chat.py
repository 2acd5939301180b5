"""The chat WebSocket protocol, in process."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from agents.models import ModelRequest, ModelResponse, ScriptedModel
from tests.app.service.helpers import (
    DOC,
    EDITOR,
    OTHER_EDITOR,
    REVIEWER,
    auth,
    connect,
    create_session,
    setup,
    turn,
    until,
)

S = ScriptedModel


def test_a_turn_streams_frames_in_order_with_seq(client: TestClient, model: ScriptedModel) -> None:
    model.push(
        S.tool_calls(("update_jobs", {"jobs": [{"key": "check", "name": "Verify coverage"}]})),
        S.text("Renamed Check coverage to Verify coverage."),
    )
    workflow_id, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("rename check coverage to verify coverage"))
        frames = until(ws, "turn.completed")
    kinds = [f["type"] for f in frames]
    assert kinds[0] == "turn.started"
    assert kinds[1] == "route"
    assert kinds.index("workflow") < kinds.index("message") < kinds.index("turn.completed")
    seqs = [f["seq"] for f in frames]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    turn_id = frames[0]["turn_id"]
    assert all(f["turn_id"] == turn_id for f in frames)
    workflow_frame = next(f for f in frames if f["type"] == "workflow")
    assert workflow_frame["workflow_id"] == workflow_id
    assert workflow_frame["version"] == 2
    assert "Verify coverage" in workflow_frame["yaml"]
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert stored["version"] == 2 and stored["yaml"] == workflow_frame["yaml"]
    completed = frames[-1]
    assert completed["version"] == 2 and completed["tool_rounds"] == 1
    assert completed["usage"]["cost_usd"] == 0.0 and len(completed["usage"]["calls"]) == 2
    assert completed["duration_ms"] >= 0
    versions = client.get(f"/v1/workflows/{workflow_id}/versions", headers=auth(EDITOR)).json()
    assert versions[0]["tool"] == "update_jobs" and versions[0]["turn_id"] == turn_id


def test_reloaded_session_shows_messages_and_document(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(S.text("It fetches a referral, then checks coverage."))
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("what does this do?"))
        until(ws, "turn.completed")
    detail = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert [(m["role"], m["content"]) for m in detail["messages"]] == [
        ("user", "what does this do?"),
        ("assistant", "It fetches a referral, then checks coverage."),
    ]
    assert detail["workflow"]["yaml"] == DOC


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("not json", "invalid_json"),
        ("[1, 2]", "invalid_frame"),
        (json.dumps({"type": "dance"}), "unknown_frame_type"),
        (json.dumps({"content": "hi"}), "unknown_frame_type"),
        (json.dumps({"type": "turn"}), "invalid_frame"),
        (json.dumps({"type": "turn", "content": "hi", "sneaky": 1}), "invalid_frame"),
        (json.dumps({"type": "confirm", "request_id": "x"}), "invalid_frame"),
        (json.dumps({"type": "turn", "content": "x" * 70_000}), "frame_too_large"),
        (json.dumps({"type": "cancel"}), "no_turn"),
        (
            json.dumps({"type": "confirm", "request_id": "x", "approved": True}),
            "no_pending_confirmation",
        ),
    ],
)
def test_bad_frames_get_error_frames_and_the_connection_survives(
    client: TestClient, model: ScriptedModel, raw: str, code: str
) -> None:
    model.push(S.text("Hello."))
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_text(raw)
        error = ws.receive_json()
        assert error["type"] == "error" and error["code"] == code, error
        ws.send_json(turn("hi"))
        assert until(ws, "turn.completed")[-1]["type"] == "turn.completed"


def test_a_turn_on_a_busy_workflow_waits_in_line_and_runs_when_its_turn_comes(
    client: TestClient, model: ScriptedModel
) -> None:
    release = threading.Event()

    async def slow(request: ModelRequest) -> ModelResponse:
        await asyncio.to_thread(release.wait, 10)
        return S.text("Done.")

    model.push(slow, S.text("Second."))
    workflow_id, session_id = setup(client)
    other = create_session(client, workflow_id)
    with connect(client, session_id) as ws, connect(client, other["id"]) as ws2:
        ws.send_json(turn("first"))
        until(ws, "route")
        ws.send_json(turn("again, same socket"))
        assert ws.receive_json()["code"] == "busy"  # one turn per socket at a time
        ws2.send_json(turn("another session, same workflow"))
        queued = ws2.receive_json()
        assert (queued["type"], queued["position"]) == ("queued", 1), queued
        release.set()
        assert until(ws, "turn.completed")
        second = until(ws2, "turn.completed")
    assert second[0]["type"] == "turn.started"
    assert [f["text"] for f in second if f["type"] == "message"] == ["Second."]


def test_a_queued_turn_cancelled_leaves_the_line_and_never_runs(
    client: TestClient, model: ScriptedModel
) -> None:
    release = threading.Event()

    async def slow(request: ModelRequest) -> ModelResponse:
        await asyncio.to_thread(release.wait, 10)
        return S.text("Done.")

    model.push(slow, S.text("Third."))
    workflow_id, session_id = setup(client)
    second, third = create_session(client, workflow_id), create_session(client, workflow_id)
    with (
        connect(client, session_id) as ws,
        connect(client, second["id"]) as ws2,
        connect(client, third["id"]) as ws3,
    ):
        ws.send_json(turn("first"))
        until(ws, "route")
        ws2.send_json(turn("second"))
        assert ws2.receive_json()["position"] == 1
        ws3.send_json(turn("third"))
        assert ws3.receive_json()["position"] == 2
        ws2.send_json({"type": "cancel"})
        cancelled = ws2.receive_json()
        assert (cancelled["type"], cancelled["code"]) == ("error", "cancelled"), cancelled
        assert "turn_id" not in cancelled
        moved = ws3.receive_json()  # the third moves up once the second has left
        assert (moved["type"], moved["position"]) == ("queued", 1), moved
        release.set()
        assert until(ws, "turn.completed")
        third_frames = until(ws3, "turn.completed")
    assert [f["text"] for f in third_frames if f["type"] == "message"] == ["Third."]
    assert model.remaining == 0  # the cancelled turn never reached the model


def test_beyond_the_line_a_turn_is_busy(
    app_client: Callable[..., TestClient], model: ScriptedModel
) -> None:
    client = app_client(turn_queue_size=1)
    release = threading.Event()

    async def slow(request: ModelRequest) -> ModelResponse:
        await asyncio.to_thread(release.wait, 10)
        return S.text("Done.")

    model.push(slow, S.text("Second."))
    workflow_id, session_id = setup(client)
    second, third = create_session(client, workflow_id), create_session(client, workflow_id)
    with (
        connect(client, session_id) as ws,
        connect(client, second["id"]) as ws2,
        connect(client, third["id"]) as ws3,
    ):
        ws.send_json(turn("first"))
        until(ws, "route")
        ws2.send_json(turn("second"))
        assert ws2.receive_json()["type"] == "queued"
        ws3.send_json(turn("third"))
        busy = ws3.receive_json()
        assert (busy["type"], busy["code"]) == ("error", "busy"), busy
        assert "1 more are waiting" in busy["message"]
        release.set()
        assert until(ws, "turn.completed")
        assert until(ws2, "turn.completed")


def test_without_a_line_a_turn_on_a_busy_workflow_is_busy(
    app_client: Callable[..., TestClient], model: ScriptedModel
) -> None:
    client = app_client(turn_queue_size=0)
    release = threading.Event()

    async def slow(request: ModelRequest) -> ModelResponse:
        await asyncio.to_thread(release.wait, 10)
        return S.text("Done.")

    model.push(slow)
    workflow_id, session_id = setup(client)
    other = create_session(client, workflow_id)
    with connect(client, session_id) as ws, connect(client, other["id"]) as ws2:
        ws.send_json(turn("first"))
        until(ws, "route")
        ws2.send_json(turn("another session, same workflow"))
        assert until(ws2, "error")[-1]["code"] == "busy"
        release.set()
        assert until(ws, "turn.completed")


def test_cancel_stops_the_turn_at_the_last_committed_version(
    client: TestClient, model: ScriptedModel
) -> None:
    release = threading.Event()

    async def stuck(request: ModelRequest) -> ModelResponse:
        await asyncio.to_thread(release.wait, 10)
        return S.text("never seen")

    model.push(S.tool_calls(("update_workflow", {"name": "Intake"})), stuck)
    workflow_id, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("rename and think"))
        until(ws, "workflow")
        ws.send_json({"type": "cancel"})
        error = until(ws, "error")[-1]
        assert error["code"] == "cancelled"
        release.set()
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert stored["version"] == 2 and stored["name"] == "Intake"


def test_confirmation_round_trip(client: TestClient, model: ScriptedModel) -> None:
    model.push(S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Removed Fetch."))
    workflow_id, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("remove the fetch step"))
        confirm = until(ws, "confirm.required")[-1]
        assert "Fetch referral" in confirm["question"]
        ws.send_json({"type": "confirm", "request_id": "confirm-wrong", "approved": True})
        assert ws.receive_json()["code"] == "no_pending_confirmation"
        ws.send_json({"type": "confirm", "request_id": confirm["request_id"], "approved": True})
        frames = until(ws, "turn.completed")
    assert any(f["type"] == "workflow" for f in frames)
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert "fetch:" not in stored["yaml"]


def test_confirmation_resumes_from_another_connection(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Kept it."))
    workflow_id, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("remove the fetch step"))
        confirm = until(ws, "confirm.required")[-1]
    reloaded = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert reloaded["pending_confirmation"]["request_id"] == confirm["request_id"]
    assert reloaded["pending_confirmation"]["question"] == confirm["question"]
    with connect(client, session_id) as ws:  # "another device"
        ws.send_json({"type": "confirm", "request_id": confirm["request_id"], "approved": False})
        until(ws, "turn.completed")
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert stored["yaml"] == DOC
    after = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert after["pending_confirmation"] is None


def test_read_only_session_cannot_mutate_through_any_frame(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(S.tool_calls(("remove_jobs", {"keys": ["check"]})), S.text("I can't edit here."))
    workflow_id, session_id = setup(client, token=REVIEWER)
    with connect(client, session_id, token=REVIEWER) as ws:
        ws.send_json(turn("delete check coverage"))
        frames = until(ws, "turn.completed")
    assert not any(f["type"] == "workflow" for f in frames)
    # Reading, previewing a change on a copy and test-running change nothing.
    assert {t["name"] for t in model.requests[-1].tools} == {
        "inspect_job_code",
        "search_documentation",
        "preview_change",
        "test_run",
    }
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert stored["version"] == 1


def test_missing_token_closes_with_1008(client: TestClient) -> None:
    _, session_id = setup(client)
    url = f"/v1/sessions/{session_id}/ws"
    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect(url) as ws:
        ws.receive_json()
    assert closed.value.code == 1008


def test_someone_elses_session_is_not_found(client: TestClient) -> None:
    _, session_id = setup(client)
    with connect(client, session_id, token=OTHER_EDITOR) as ws:
        assert ws.receive_json()["code"] == "not_found"
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
    assert closed.value.code == 4404
