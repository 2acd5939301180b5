"""Harder inputs and races: they get typed errors and the data stays consistent."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from agents.models import ModelRequest, ModelResponse, ScriptedModel
from app.store.database import create_engine
from tests.app.service.helpers import (
    DOC,
    EDITOR,
    auth,
    connect,
    create_session,
    create_workflow,
    setup,
    turn,
    until,
    watch,
)

S = ScriptedModel


def test_out_of_range_versions_and_nul_characters_are_422(client: TestClient) -> None:
    workflow = create_workflow(client)
    wid = workflow["id"]
    huge = 99999999999999999999
    responses = [
        client.get(f"/v1/workflows/{wid}/versions/{huge}", headers=auth(EDITOR)),
        client.post(f"/v1/workflows/{wid}/revert", json={"version": huge}, headers=auth(EDITOR)),
        client.put(
            f"/v1/workflows/{wid}",
            json={"yaml": DOC, "expected_version": huge},
            headers=auth(EDITOR),
        ),
        client.post("/v1/workflows", json={"name": "nul\u0000name"}, headers=auth(EDITOR)),
    ]
    assert [r.status_code for r in responses] == [422, 422, 422, 422]
    assert all(r.json()["error"]["code"] == "invalid_request" for r in responses)


def test_nul_in_a_turn_is_an_error_frame_and_records_nothing(
    client: TestClient, model: ScriptedModel
) -> None:
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("hello \u0000"))
        assert ws.receive_json()["code"] == "invalid_frame"
    detail = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert detail["messages"] == []


@pytest.mark.parametrize("blank", ["", "   ", "\n\t ", "\u00a0", "\u200b "])
def test_a_turn_of_only_spaces_is_refused_as_an_empty_one_and_records_nothing(
    client: TestClient, model: ScriptedModel, blank: str
) -> None:
    """No planner turn and nothing in the history for text that says nothing: the same
    ``invalid_frame`` as an empty turn; the socket then runs a real turn."""
    model.push(S.text("Hello."))
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn(blank))
        error = ws.receive_json()
        assert (error["type"], error["code"]) == ("error", "invalid_frame"), error
        assert "content" in error["message"]
        detail = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
        assert detail["messages"] == [] and detail["turns"] == []
        ws.send_json(turn("hi"))
        assert until(ws, "turn.completed")[-1]["type"] == "turn.completed"
    detail = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert [(m["role"], m["content"]) for m in detail["messages"]] == [
        ("user", "hi"),
        ("assistant", "Hello."),
    ]
    assert len(detail["turns"]) == 1


def test_a_name_given_with_imported_yaml_is_the_documents_name(client: TestClient) -> None:
    response = client.post(
        "/v1/workflows", json={"name": "Imported", "yaml": DOC}, headers=auth(EDITOR)
    )
    body = response.json()
    assert body["name"] == "Imported"
    assert "name: Imported\n" in body["yaml"]


def test_watcher_ahead_of_the_server_gets_the_current_document(client: TestClient) -> None:
    workflow = create_workflow(client)
    with watch(client, workflow["id"], since=100) as watcher:
        frame = watcher.receive_json()
    assert frame["version"] == 1 and frame["yaml"] == DOC


def test_cancel_right_after_a_turn_always_answers(client: TestClient, model: ScriptedModel) -> None:
    async def answer(request: ModelRequest) -> ModelResponse:
        if request.context.user_text == "hi":
            await asyncio.sleep(30)  # cancelled long before this ends
        return S.text("Hello.")

    model.push(answer, answer)
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("hi"))
        ws.send_json({"type": "cancel"})
        frames = until(ws, "error")
        assert frames[-1]["code"] == "cancelled"
        ws.send_json(turn("hi again"))
        assert until(ws, "turn.completed")[-1]["type"] == "turn.completed"


def test_a_new_turn_abandons_an_unanswered_confirmation(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Hello."))
    workflow_id, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("remove the fetch step"))
        confirm = until(ws, "confirm.required")[-1]
        ws.send_json(turn("never mind, say hello"))
        until(ws, "turn.completed")
        ws.send_json({"type": "confirm", "request_id": confirm["request_id"], "approved": True})
        assert ws.receive_json()["code"] == "no_pending_confirmation"
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert stored["yaml"] == DOC


def test_a_change_saved_elsewhere_mid_turn_fails_the_turn_cleanly(
    client: TestClient, model: ScriptedModel
) -> None:
    thinking, saved = threading.Event(), threading.Event()

    async def slow_rename(request: ModelRequest) -> ModelResponse:
        thinking.set()
        await asyncio.to_thread(saved.wait, 10)
        return S.tool_calls(("update_workflow", {"name": "From the turn"}))

    model.push(slow_rename)
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"])
    with connect(client, session["id"]) as ws:
        ws.send_json(turn("rename the workflow"))
        assert thinking.wait(10)
        put = client.put(
            f"/v1/workflows/{workflow['id']}",
            json={"yaml": DOC.replace("Referral intake", "From REST"), "expected_version": 1},
            headers=auth(EDITOR),
        )
        assert put.status_code == 200
        saved.set()
        frames = until(ws, "error")
    assert frames[-1]["code"] == "commit_failed"
    assert "last saved version" in frames[-1]["message"]
    stored = client.get(f"/v1/workflows/{workflow['id']}", headers=auth(EDITOR)).json()
    assert stored["version"] == 2 and stored["name"] == "From REST"


def test_a_store_failure_mid_turn_tells_the_client_nothing_of_the_database(
    client: TestClient, model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's error names tables and carries the statement's values (the whole
    document, the session and turn ids): it is logged, never sent."""
    services = client.app.state.services  # type: ignore[attr-defined]

    async def failing_commit(*args: object, **kwargs: object) -> int:
        raise DBAPIError(
            "INSERT INTO workflow_versions (yaml) VALUES (?)", ("name: secret-yaml",), None
        )

    monkeypatch.setattr(services.store, "commit_version", failing_commit)
    model.push(S.tool_calls(("update_workflow", {"name": "Renamed"})))
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"])
    with connect(client, session["id"]) as ws:
        ws.send_json(turn("rename the workflow"))
        frames = until(ws, "error")
    error = frames[-1]
    assert error["code"] == "commit_failed"
    assert "update_workflow" in error["message"] and "last saved version" in error["message"]
    for leak in ("INSERT", "workflow_versions", "secret-yaml", session["id"]):
        assert leak not in error["message"], leak


async def test_statement_values_are_kept_out_of_database_errors(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    try:
        async with engine.begin() as conn:
            with pytest.raises(DBAPIError) as failed:
                await conn.execute(text("SELECT * FROM nowhere WHERE a = :a"), {"a": "secret"})
        assert "secret" not in str(failed.value)
    finally:
        await engine.dispose()


def test_a_turn_cancelled_before_its_graph_starts_is_finished_not_left_running(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between recording the turn and running its graph (a cold parse of a big
    document can take seconds), a cancel used to leave the turn ``running``."""
    services = client.app.state.services  # type: ignore[attr-defined]

    async def slow_runtime(*args: object, **kwargs: object) -> object:
        await asyncio.sleep(30)  # a cold parse, cancelled long before it ends
        raise AssertionError("not reached")

    monkeypatch.setattr(services.turns, "turn_runtime", slow_runtime)
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"])
    with connect(client, session["id"]) as ws:
        ws.send_json(turn("hello"))
        started = until(ws, "turn.started")[-1]
        ws.send_json({"type": "cancel"})
        assert until(ws, "error")[-1]["code"] == "cancelled"
    record = client.portal.call(services.store.get_turn, started["turn_id"])  # type: ignore[union-attr]
    assert (record.status, record.error_code) == ("cancelled", "cancelled")


def test_a_turn_whose_set_up_fails_is_finished_as_failed(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = client.app.state.services  # type: ignore[attr-defined]

    async def broken_runtime(*args: object, **kwargs: object) -> object:
        raise RuntimeError("could not parse")

    monkeypatch.setattr(services.turns, "turn_runtime", broken_runtime)
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"])
    with connect(client, session["id"]) as ws:
        ws.send_json(turn("hello"))
        started = until(ws, "turn.started")[-1]
        assert until(ws, "error")[-1]["code"] == "internal_error"
    record = client.portal.call(services.store.get_turn, started["turn_id"])  # type: ignore[union-attr]
    assert (record.status, record.error_code) == ("failed", "setup_failed")
