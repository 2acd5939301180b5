"""Usage and cost through the service: turn.completed carries it, the store keeps it for
completed, failed, cancelled and resumed turns, and GET /v1/sessions/{id} returns it."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models import ModelError, ModelRequest, ModelResponse, ScriptedModel
from agents.models.base import Usage
from tests.app.service.helpers import EDITOR, auth, connect, setup, turn, until

S = ScriptedModel
OPUS = "claude-opus-4-5-20251101"  # a dated snapshot id, priced as claude-opus-4-5


def _usage(i: int, o: int, cw: int = 0, cr: int = 0) -> Usage:
    return Usage(
        input_tokens=i, output_tokens=o, cache_creation_input_tokens=cw, cache_read_input_tokens=cr
    )


def _opus(i: int, o: int, cw: int = 0, cr: int = 0) -> float:
    return (i * 5 + o * 25 + cw * 6.25 + cr * 0.5) / 1e6


def _present(value: Any) -> Any:
    """``value`` without ``None`` fields (frames leave them out; REST bodies say null)."""
    if isinstance(value, dict):
        return {k: _present(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_present(v) for v in value]
    return value


def _turns(client: TestClient, session_id: str) -> list[dict[str, Any]]:
    body = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    turns: list[dict[str, Any]] = body["turns"]
    return turns


def test_a_completed_turn_carries_and_stores_its_usage_and_cost(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(
        S.tool_calls(
            ("update_workflow", {"name": "Intake"}), usage=_usage(1000, 80, cw=4000), model=OPUS
        ),
        S.text("Renamed it.", usage=_usage(1100, 20, cr=4000), model=OPUS),
    )
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("rename it to Intake"))
        completed = until(ws, "turn.completed")[-1]
    usage = completed["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (2100, 100)
    assert (usage["cache_creation_input_tokens"], usage["cache_read_input_tokens"]) == (4000, 4000)
    cost = _opus(1000, 80, cw=4000) + _opus(1100, 20, cr=4000)
    assert usage["cost_usd"] == pytest.approx(cost)
    assert [(c["role"], c["model"]) for c in usage["calls"]] == [("planner", OPUS)] * 2

    (stored,) = _turns(client, session_id)
    assert stored["id"] == completed["turn_id"] and stored["status"] == "completed"
    assert stored["route"] == "planner"
    assert _present(stored["usage"]) == usage  # the same object the frame carried
    prompts = stored["prompts"]
    assert {"planner", "planner_user"} <= set(prompts)
    assert all(p["version"].startswith("v") and len(p["hash"]) == 16 for p in prompts.values())
    assert usage["calls"][0]["prompt_hash"] == prompts["planner"]["hash"]


def test_a_failed_turn_keeps_its_usage(client: TestClient, model: ScriptedModel) -> None:
    model.push(
        S.tool_calls(("update_workflow", {"name": "Intake"}), usage=_usage(900, 60), model=OPUS),
        ModelError("the model gave up"),
    )
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("rename it to Intake"))
        assert until(ws, "error")[-1]["code"] == "model_error"
    (stored,) = _turns(client, session_id)
    assert (stored["status"], stored["error_code"], stored["route"]) == (
        "failed",
        "model_error",
        "planner",
    )
    assert stored["usage"]["input_tokens"] == 900
    assert stored["usage"]["cost_usd"] == pytest.approx(_opus(900, 60))
    assert [c["error"] for c in stored["usage"]["calls"]] == [None, "model_error"]
    assert "planner" in stored["prompts"]


def test_a_cancelled_turn_keeps_its_usage(client: TestClient, model: ScriptedModel) -> None:
    release = threading.Event()

    async def stuck(request: ModelRequest) -> ModelResponse:
        await asyncio.to_thread(release.wait, 10)
        return S.text("never seen")

    model.push(
        S.tool_calls(("update_workflow", {"name": "Intake"}), usage=_usage(700, 30), model=OPUS),
        stuck,
    )
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("rename and think"))
        until(ws, "workflow")
        ws.send_json({"type": "cancel"})
        assert until(ws, "error")[-1]["code"] == "cancelled"
        release.set()
    (stored,) = _turns(client, session_id)
    assert (stored["status"], stored["route"]) == ("cancelled", "planner")
    assert stored["usage"]["input_tokens"] == 700
    assert stored["usage"]["cost_usd"] == pytest.approx(_opus(700, 30))
    assert [c["error"] for c in stored["usage"]["calls"]] == [None, "cancelled"]


def test_a_resumed_turn_counts_the_calls_before_its_pause(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(
        S.tool_calls(("remove_jobs", {"keys": ["fetch"]}), usage=_usage(800, 40), model=OPUS),
        S.text("Removed Fetch.", usage=_usage(950, 15), model=OPUS),
    )
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("remove the fetch step"))
        confirm = until(ws, "confirm.required")[-1]
    (paused,) = _turns(client, session_id)
    assert (paused["status"], paused["route"]) == ("paused", "planner")
    assert paused["usage"]["input_tokens"] == 800 and "planner" in paused["prompts"]
    with connect(client, session_id) as ws:  # resumed by a fresh runtime
        ws.send_json({"type": "confirm", "request_id": confirm["request_id"], "approved": True})
        completed = until(ws, "turn.completed")[-1]
    assert [c["input_tokens"] for c in completed["usage"]["calls"]] == [800, 950]
    assert completed["usage"]["cost_usd"] == pytest.approx(_opus(800, 40) + _opus(950, 15))
    (stored,) = _turns(client, session_id)
    assert (stored["status"], stored["route"]) == ("completed", "planner")
    assert _present(stored["usage"]) == completed["usage"]
    assert stored["prompts"]["planner"] == paused["prompts"]["planner"]


def test_the_router_is_part_of_the_turn_totals(client: TestClient, model: ScriptedModel) -> None:
    model.push(
        S.tool_calls(
            ("route", {"destination": "planner", "confidence": 5}),
            usage=_usage(300, 12),
            model="claude-haiku-4-5",
        ),
        role="router",
    )
    model.push(S.text("It checks coverage.", usage=_usage(1000, 30), model=OPUS))
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("what does this step do?", page="job", job_key="check"))
        completed = until(ws, "turn.completed")[-1]
    usage = completed["usage"]
    assert [c["role"] for c in usage["calls"]] == ["router", "planner"]
    assert usage["input_tokens"] == 1300
    assert usage["cost_usd"] == pytest.approx((300 * 1 + 12 * 5) / 1e6 + _opus(1000, 30))
    (stored,) = _turns(client, session_id)
    assert {"router", "planner"} <= set(stored["prompts"])


def test_the_price_table_comes_from_settings(app_client: Any, model: ScriptedModel) -> None:
    client = app_client(
        model_prices={"scripted": {"input": 2, "output": 10, "cache_write": 2.5, "cache_read": 0.2}}
    )
    model.push(S.text("Hello.", usage=_usage(1000, 100)))
    _, session_id = setup(client)
    with connect(client, session_id) as ws:
        ws.send_json(turn("hello"))
        completed = until(ws, "turn.completed")[-1]
    assert completed["usage"]["cost_usd"] == pytest.approx((1000 * 2 + 100 * 10) / 1e6)
