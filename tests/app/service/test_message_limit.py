"""Limits checked before anything runs: a message over the configured length is an
``error`` frame and records nothing; an unknown model id stops start-up."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agents.models import ScriptedModel
from tests.app.service.helpers import EDITOR, auth, connect, setup, turn, until


def test_a_message_over_the_limit_is_an_error_frame_and_records_nothing(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(ScriptedModel.text("Hello."))
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        # the default PLANWRIGHT_MAX_MESSAGE_TOKENS is 6,000 (counted with the local BPE)
        ws.send_json(turn("referral " * 6_001))
        frame = ws.receive_json()
        assert (frame["type"], frame["code"]) == ("error", "message_too_long")
        assert "tokens long; the limit is 6,000" in frame["message"]
        ws.send_json(turn("hello"))  # the connection stays usable
        assert until(ws, "turn.completed")[-1]["type"] == "turn.completed"
    detail = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert [m["content"] for m in detail["messages"]] == ["hello", "Hello."]
    assert len(model.requests) == 1


def test_an_unknown_model_id_stops_start_up(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from tests.app.service.helpers import make_settings

    with pytest.raises(ValidationError, match="PLANWRIGHT_PLANNER_MODEL"):
        make_settings(tmp_path, anthropic_api_key="sk-test", planner_model="claude-opus-9-retired")
