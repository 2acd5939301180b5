"""Checkpoints exist only while a turn can be resumed: a paused turn keeps its
own (any worker sharing the database can answer it); a finished one leaves none."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agents.models import ModelRequest, ModelResponse, ScriptedModel
from tests.app.service.helpers import (
    DOC,
    EDITOR,
    auth,
    checkpoint_rows,
    connect,
    setup,
    turn,
    until,
)

S = ScriptedModel


def test_a_completed_turn_leaves_no_checkpoint(
    client: TestClient, model: ScriptedModel, database_url: str, tmp_path: Path
) -> None:
    rounds = [S.tool_calls(("update_workflow", {"name": f"Intake {i}"})) for i in range(10)]
    model.push(*rounds, S.text("Renamed it ten times."))
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("rename it, ten times"))
        completed = until(ws, "turn.completed", limit=100)[-1]
    assert completed["tool_rounds"] == 10 and completed["version"] == 11
    assert checkpoint_rows(database_url, tmp_path) == 0


def test_failed_and_cancelled_turns_leave_no_checkpoint(
    client: TestClient, model: ScriptedModel, database_url: str, tmp_path: Path
) -> None:
    def broken(request: ModelRequest) -> ModelResponse:
        raise RuntimeError("model down")

    async def slow(request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(30)  # cancelled long before
        return S.text("late")

    model.push(broken, slow)
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("hello"))
        assert until(ws, "error")[-1]["code"] == "internal_error"
        ws.send_json(turn("hello again"))
        until(ws, "route")
        ws.send_json({"type": "cancel"})
        assert until(ws, "error")[-1]["code"] == "cancelled"
    assert checkpoint_rows(database_url, tmp_path) == 0


def test_a_paused_turn_resumes_on_another_worker_and_then_leaves_nothing(
    app_client: Callable[..., TestClient],
    model: ScriptedModel,
    database_url: str,
    tmp_path: Path,
) -> None:
    worker_a, worker_b = app_client(), app_client()  # one database, one checkpointer
    model.push(S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Removed Fetch."))
    workflow_id, session_id = setup(worker_a)
    with connect(worker_a, session_id) as ws:
        ws.send_json(turn("remove the fetch step"))
        confirm = until(ws, "confirm.required")[-1]
    assert checkpoint_rows(database_url, tmp_path) > 0
    pending = worker_b.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert pending["pending_confirmation"]["request_id"] == confirm["request_id"]
    with connect(worker_b, session_id) as ws:
        ws.send_json({"type": "confirm", "request_id": confirm["request_id"], "approved": True})
        frames = until(ws, "turn.completed")
    assert [f["version"] for f in frames if f["type"] == "workflow"] == [2]
    stored = worker_a.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert "fetch:" not in stored["yaml"] and stored["yaml"] != DOC
    assert checkpoint_rows(database_url, tmp_path) == 0


def test_a_confirmation_left_unanswered_is_dropped_by_the_next_turn(
    client: TestClient, model: ScriptedModel, database_url: str, tmp_path: Path
) -> None:
    model.push(S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Hello."))
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("remove the fetch step"))
        until(ws, "confirm.required")
        ws.send_json(turn("never mind, hello"))
        until(ws, "turn.completed")
    assert checkpoint_rows(database_url, tmp_path) == 0


def test_a_turn_a_dead_worker_left_running_leaves_no_checkpoint(
    client: TestClient, model: ScriptedModel, database_url: str, tmp_path: Path
) -> None:
    """A worker that took the answer to a question and died mid-turn leaves the turn
    ``running`` and its pause's checkpoint behind; the next turn abandons the turn
    and deletes that checkpoint (nothing can resume it)."""
    model.push(S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Hello."))
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("remove the fetch step"))
        confirm = until(ws, "confirm.required")[-1]
    assert checkpoint_rows(database_url, tmp_path) > 0
    store = client.app.state.services.store  # type: ignore[attr-defined]
    client.portal.call(store.update_turn_status, confirm["turn_id"], "running")  # type: ignore[union-attr]
    with connect(client, session_id) as ws:
        ws.send_json(turn("hello"))
        until(ws, "turn.completed")
    dead = client.portal.call(store.get_turn, confirm["turn_id"])  # type: ignore[union-attr]
    assert (dead.status, dead.error_code) == ("failed", "abandoned")
    assert checkpoint_rows(database_url, tmp_path) == 0


def test_a_saver_that_cannot_delete_an_abandoned_turns_checkpoint_does_not_stop_the_next_turn(
    client: TestClient, model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    model.push(S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Hello."))
    services = client.app.state.services  # type: ignore[attr-defined]
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("remove the fetch step"))
        confirm = until(ws, "confirm.required")[-1]
    client.portal.call(services.store.update_turn_status, confirm["turn_id"], "running")  # type: ignore[union-attr]
    real_forget = services.runner.forget

    async def flaky_forget(turn_id: str) -> None:
        if turn_id == confirm["turn_id"]:
            raise ConnectionError("checkpointer blip")
        await real_forget(turn_id)

    monkeypatch.setattr(services.runner, "forget", flaky_forget)
    with connect(client, session_id) as ws:
        ws.send_json(turn("hello"))
        assert until(ws, "turn.completed")[-1]["type"] == "turn.completed"
    dead = client.portal.call(services.store.get_turn, confirm["turn_id"])  # type: ignore[union-attr]
    assert (dead.status, dead.error_code) == ("failed", "abandoned")
