"""With Langfuse configured, a chat turn through the service becomes one trace."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models import ScriptedModel
from agents.models.base import Usage
from tests.app.service.helpers import EDITOR, connect, create_session, create_workflow, turn, until
from tests.evals.langfuse_stub import LangfuseStub

S = ScriptedModel


def test_a_turn_is_traced_with_its_session_and_tools(
    app_client: Callable[..., TestClient], model: ScriptedModel
) -> None:
    model.push(
        S.tool_calls(("update_workflow", {"name": "Intake"})),
        S.text("Renamed it; the key sk-ant-api03-NOTINTRACES stays out of traces."),
    )
    with LangfuseStub() as stub:
        session = _traced_turn(app_client, stub, "rename the workflow to Intake")[0]
        roots = stub.spans_named("turn")
        names = {span["name"] for span in stub.spans}
        sent = b"".join(r.body for r in stub.requests if r.path.endswith("/otel/v1/traces"))
    assert len(roots) == 1
    assert roots[0]["attributes"]["session.id"] == session["id"]
    assert {"planner model call", "update_workflow"} <= names
    assert b"NOTINTRACES" not in sent


def test_each_generation_carries_model_usage_with_cache_tokens_and_cost(
    app_client: Callable[..., TestClient], model: ScriptedModel
) -> None:
    usage = Usage(
        input_tokens=1000,
        output_tokens=200,
        cache_creation_input_tokens=3000,
        cache_read_input_tokens=4000,
    )
    model.push(S.text("It fetches and checks.", usage=usage, model="claude-opus-4-5-20251101"))
    with LangfuseStub() as stub:
        completed = _traced_turn(app_client, stub, "what does it do?")[1]
        (generation,) = stub.spans_named("planner model call")
    attributes = generation["attributes"]
    assert attributes["langfuse.observation.model.name"] == "claude-opus-4-5-20251101"
    assert json.loads(attributes["langfuse.observation.usage_details"]) == {
        "input": 1000,
        "output": 200,
        "cache_creation_input_tokens": 3000,
        "cache_read_input_tokens": 4000,
    }
    cost = json.loads(attributes["langfuse.observation.cost_details"])
    assert cost == pytest.approx(
        {
            "input": 0.005,
            "output": 0.005,
            "cache_creation_input_tokens": 0.01875,
            "cache_read_input_tokens": 0.002,
            "total": 0.03075,
        }
    )
    assert completed["usage"]["cost_usd"] == pytest.approx(cost["total"])


def _traced_turn(
    app_client: Callable[..., TestClient], stub: LangfuseStub, content: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run one turn on a new workflow with tracing sent to ``stub``, flushed; the
    session and the ``turn.completed`` frame."""
    client = app_client(
        langfuse_public_key=f"pk-lf-test-{uuid.uuid4().hex[:12]}",
        langfuse_secret_key="sk-lf-test-secret",
        langfuse_host=stub.base_url,
    )
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"])
    with connect(client, session["id"], token=EDITOR) as ws:
        ws.send_json(turn(content))
        completed = until(ws, "turn.completed")[-1]
    client.app.state.services.turns.tracer.flush()  # type: ignore[attr-defined]
    return session, completed
