from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.graph import build_graph
from agents.models import ModelRequest, ModelResponse, ScriptedModel
from agents.runner import TurnRunner
from tests.agents.helpers import resume, run, runtime_for, turn

S = ScriptedModel


async def test_pending_confirmation_is_readable_until_answered() -> None:
    model = ScriptedModel([S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Removed.")])
    paused = await run(model, "remove fetch")
    pending = await paused.runner.pending_confirmation("turn-1")
    assert pending == {
        "request_id": paused.last["request_id"],
        "question": paused.last["question"],
    }
    await resume(paused, approved=True)
    assert await paused.runner.pending_confirmation("turn-1") is None


def _threads(saver: InMemorySaver) -> set[str]:
    return {thread_id for thread_id in saver.storage if saver.storage[thread_id]}


async def test_a_finished_turn_leaves_no_checkpoint_when_asked() -> None:
    saver = InMemorySaver()
    runner = TurnRunner(build_graph(saver), keep_finished=False)
    model = ScriptedModel([S.tool_calls(("update_workflow", {"name": "Intake"})), S.text("Done.")])
    events = [e.wire() async for e in runner.start(turn("rename"), runtime_for(model))]
    assert events[-1]["type"] == "turn.completed" and events[-1]["version"] == 2
    assert _threads(saver) == set()


async def test_a_failed_or_cancelled_turn_leaves_no_checkpoint() -> None:
    saver = InMemorySaver()
    runner = TurnRunner(build_graph(saver), keep_finished=False)

    def broken(request: ModelRequest) -> ModelResponse:
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError):
        async for _ in runner.start(turn("hi"), runtime_for(ScriptedModel([broken]))):
            pass
    assert _threads(saver) == set()

    calling = asyncio.Event()

    async def slow(request: ModelRequest) -> ModelResponse:
        calling.set()
        await asyncio.sleep(30)
        return S.text("late")

    async def consume() -> None:
        async for _ in runner.start(turn("hi", turn_id="t2"), runtime_for(ScriptedModel([slow]))):
            pass

    task = asyncio.create_task(consume())
    await asyncio.wait_for(calling.wait(), 10)  # cancelled mid-call (not after a fixed 0.3 s)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _threads(saver) == set()


async def test_a_paused_turn_keeps_its_checkpoint_and_resumes_on_another_runner() -> None:
    saver = InMemorySaver()
    first = TurnRunner(build_graph(saver), keep_finished=False)
    model = ScriptedModel([S.tool_calls(("remove_jobs", {"keys": ["fetch"]}))])
    events = [e.wire() async for e in first.start(turn("remove fetch"), runtime_for(model))]
    assert events[-1]["type"] == "confirm.required"
    assert _threads(saver) == {"turn-1"}
    second = TurnRunner(build_graph(saver), keep_finished=False)  # "another worker"
    after = ScriptedModel([S.text("Removed Fetch referral.")])
    resumed = [e.wire() async for e in second.resume("turn-1", True, runtime_for(after))]
    assert resumed[-1]["type"] == "turn.completed" and resumed[-1]["version"] == 2
    assert _threads(saver) == set()
