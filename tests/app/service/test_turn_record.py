"""Persist, then publish: what a socket shows is already on record."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi.testclient import TestClient

from agents.models import ScriptedModel
from tests.app.service.helpers import EDITOR, auth, connect, setup, turn, until

S = ScriptedModel
STORE_DELAY_S = 0.4


def test_the_final_message_is_stored_before_it_is_sent(
    client: TestClient, model: ScriptedModel
) -> None:
    store: Any = client.app.state.services.store  # type: ignore[attr-defined]
    real_add = store.add_message
    stored_at: list[float] = []

    async def slow_add(session_id: str, role: str, content: str, turn_id: str | None) -> Any:
        if role == "assistant":
            await asyncio.sleep(STORE_DELAY_S)  # a slow database
        result = await real_add(session_id, role, content, turn_id)
        if role == "assistant":
            stored_at.append(time.monotonic())
        return result

    store.add_message = slow_add
    model.push(S.text("Hello there."))
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("hi"))
        frames = until(ws, "message")
        received_at = time.monotonic()
        until(ws, "turn.completed")
    assert frames[-1]["text"] == "Hello there."
    assert stored_at and stored_at[0] <= received_at
    messages = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "hi"),
        ("assistant", "Hello there."),
    ]


def test_every_confirmation_answer_is_stored_with_its_turn(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(
        S.tool_calls(("remove_jobs", {"keys": ["fetch"]})),
        S.text("Kept Fetch referral."),
        S.tool_calls(("remove_jobs", {"keys": ["fetch"]})),
        S.text("Removed Fetch referral."),
        S.tool_calls(("remove_jobs", {"keys": ["check"]})),  # the last step: it asks
        S.text("Hello."),
    )
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("remove the fetch step"))
        first = until(ws, "confirm.required")[-1]
        ws.send_json(
            {
                "type": "confirm",
                "request_id": first["request_id"],
                "approved": False,
                "feedback": "It is still needed for the referral.",
            }
        )
        until(ws, "turn.completed")
    with connect(client, session_id) as ws:  # another device answers the next one
        ws.send_json(turn("remove the fetch step after all"))
        second = until(ws, "confirm.required")[-1]
    with connect(client, session_id) as ws:
        ws.send_json({"type": "confirm", "request_id": second["request_id"], "approved": True})
        until(ws, "turn.completed")
        ws.send_json(turn("remove the check step"))
        third = until(ws, "confirm.required")[-1]
        ws.send_json(turn("never mind, hello"))  # supersedes the third question
        until(ws, "turn.completed")
    detail = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    answers = detail["confirmations"]
    assert [a["request_id"] for a in answers] == [
        first["request_id"],
        second["request_id"],
        third["request_id"],
    ]
    assert [a["turn_id"] for a in answers] == [
        first["turn_id"],
        second["turn_id"],
        third["turn_id"],
    ]
    assert [a["question"] for a in answers] == [
        first["question"],
        second["question"],
        third["question"],
    ]
    assert [a["approved"] for a in answers] == [False, True, None]
    assert answers[0]["feedback"] == "It is still needed for the referral."
    assert answers[1]["feedback"] is None
    assert answers[0]["answered_by"].startswith("editor-")
    assert answers[0]["answered_by"] == answers[1]["answered_by"]
    assert answers[0]["answered_at"] >= answers[0]["asked_at"]
    assert answers[2]["answered_by"] is None and answers[2]["answered_at"] is None
    assert detail["pending_confirmation"] is None
