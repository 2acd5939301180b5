"""A turn past its deadline ends with an ``error`` frame (``turn_deadline``); what it
committed stays, is reported and is stored; the next turn runs normally."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient

from agents.models import ModelRequest, ModelResponse, ScriptedModel
from tests.app.service.helpers import EDITOR, auth, connect, setup, turn, until

S = ScriptedModel


def test_a_turn_past_its_deadline_is_an_error_frame_and_keeps_its_committed_change(
    app_client: Callable[..., TestClient], model: ScriptedModel
) -> None:
    async def slow(request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(30)
        return S.text("never seen")

    model.push(S.tool_calls(("update_workflow", {"name": "Intake"})), slow, S.text("Hello."))
    client = app_client(turn_deadline_s=1.0)
    workflow_id, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("rename it to Intake, then think for a long time"))
        frames = until(ws, "error")
        error = frames[-1]
        assert error["code"] == "turn_deadline"
        assert "time limit of 1 s" in error["message"]
        assert "last saved version" in error["message"]
        saved = [f for f in frames if f["type"] == "workflow"]
        assert saved and saved[-1]["version"] == 2  # the committed change was reported
        ws.send_json(turn("hello"))  # the next turn is not held up
        assert until(ws, "turn.completed")[-1]["type"] == "turn.completed"
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert (stored["version"], stored["name"]) == (2, "Intake")
    detail: dict[str, Any] = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    first = detail["turns"][0]
    assert (first["status"], first["error_code"]) == ("failed", "turn_deadline")
    assert [c["error"] for c in first["usage"]["calls"]] == [None, "turn_deadline"]
