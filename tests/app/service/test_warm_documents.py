"""Turns reuse the document the previous turn left parsed, only when it is current."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from agents import runtime as agent_runtime
from agents.models import ScriptedModel
from tests.app.service.conftest import DOC, EDITOR, auth
from tests.app.service.test_ws_chat import connect, setup, turn, until
from tools.document import WorkflowDocument

S = ScriptedModel


def test_the_next_turn_reuses_the_parsed_document_unless_it_changed_elsewhere(
    client: TestClient, model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses: list[int] = []

    class Counting:
        """Stands in for WorkflowDocument inside agents.runtime only (not REST)."""

        @staticmethod
        def from_yaml(text: str, **kwargs: object) -> WorkflowDocument:
            parses.append(len(text))
            return WorkflowDocument.from_yaml(text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(agent_runtime, "WorkflowDocument", Counting)
    model.push(
        S.tool_calls(("update_workflow", {"name": "One"})),
        S.text("Renamed."),
        S.tool_calls(("update_workflow", {"name": "Two"})),
        S.text("Renamed again."),
        S.text("Hello."),
    )
    workflow_id, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("rename to One"))
        until(ws, "turn.completed")
        first = len(parses)
        assert first == 1
        ws.send_json(turn("rename to Two"))
        until(ws, "turn.completed")
        assert len(parses) == first, "the second turn parsed the document again"
        put = client.put(
            f"/v1/workflows/{workflow_id}",
            json={"yaml": DOC.replace("Referral intake", "Three"), "expected_version": 3},
            headers=auth(EDITOR),
        )
        assert put.status_code == 200
        ws.send_json(turn("hello"))
        until(ws, "turn.completed")
    assert len(parses) == first + 1, "a document changed elsewhere must be parsed afresh"
    assert "Three" in model.requests[-1].messages[-1]["content"]
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert stored["name"] == "Three" and stored["version"] == 4
