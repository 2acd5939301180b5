"""``TurnEngine``: a graph's turns started and resumed (what ``app`` calls, via agents.api)."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver

from agents.api import ModelCallUsage, TurnEngine
from agents.models import ScriptedModel
from tests.agents.helpers import runtime_for, turn

S = ScriptedModel


def _earlier_call() -> ModelCallUsage:
    return ModelCallUsage(
        role="planner", model="claude-opus-4-5", input_tokens=1000, output_tokens=10
    )


async def test_a_paused_turn_resumes_with_its_earlier_calls_counted() -> None:
    saver = InMemorySaver()
    engine = TurnEngine.for_workflows(saver)
    model = ScriptedModel([S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Removed.")])

    run = engine.start(turn("remove fetch"), runtime_for(model), session_id="s1", user_id="u1")
    first = [e.wire() async for e in run.events]
    assert first[-1]["type"] == "confirm.required"
    assert len(run.usage.calls) == 1  # the planner's call before the pause
    pending = await engine.pending("turn-1")
    assert pending is not None and pending["request_id"] == first[-1]["request_id"]

    state = await engine.state("turn-1")
    again = engine.resume(
        "turn-1", state, runtime_for(model), approved=True, earlier=[_earlier_call()]
    )
    rest = [e.wire() async for e in again.events]
    done = rest[-1]
    assert done["type"] == "turn.completed" and done["version"] == 2
    # The stored call before the pause and the one after it, in one total.
    assert len(again.usage.calls) == 2
    assert done["usage"]["input_tokens"] == 1000 + again.usage.calls[1].input_tokens
    # A finished turn's checkpoints are gone: nothing is left to resume.
    assert await engine.pending("turn-1") is None
    assert not any(saver.storage.get("turn-1", {}).values())


async def test_forget_deletes_a_paused_turn() -> None:
    engine = TurnEngine.for_workflows(InMemorySaver())
    model = ScriptedModel([S.tool_calls(("remove_jobs", {"keys": ["fetch"]}))])
    run = engine.start(turn("remove fetch"), runtime_for(model))
    assert [e.wire() async for e in run.events][-1]["type"] == "confirm.required"
    await engine.forget("turn-1")
    assert await engine.pending("turn-1") is None
