"""Model calls stored with their turn: totals, cost, prompts and route across run segments."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from agents.events import ModelCallUsage
from agents.usage import PromptUse
from app.store import Store

DOC = "name: demo\njobs: {}\n"


async def _turn(store: Store, turn_id: str = "t1") -> str:
    wf = await store.create_workflow(name="Demo", yaml=DOC, author=None)
    session = await store.create_session(workflow_id=wf.id, read_only=False, owner=None)
    await store.start_turn(turn_id, session_id=session.id, workflow_id=wf.id)
    return session.id


def _call(role: str, model: str, cost: float | None, **tokens: int) -> ModelCallUsage:
    return ModelCallUsage(role=role, model=model, cost_usd=cost, **tokens)  # type: ignore[arg-type]


async def test_calls_of_every_segment_add_up_on_the_turn(store: Store) -> None:
    session_id = await _turn(store)
    router = _call("router", "claude-haiku-4-5", 0.0005, input_tokens=400, output_tokens=20)
    planner = _call(
        "planner",
        "claude-opus-4-5",
        0.02,
        input_tokens=1000,
        output_tokens=300,
        cache_creation_input_tokens=2000,
    )
    planner_prompt = PromptUse(name="planner", version="v3", hash="abc")
    paused = await store.finish_turn(
        "t1",
        status="paused",
        route="planner",
        calls=[router, planner],
        prompts={"planner": planner_prompt},
    )
    assert (paused.input_tokens, paused.output_tokens) == (1400, 320)
    assert paused.cache_creation_input_tokens == 2000
    assert paused.cost_usd == pytest.approx(0.0205)

    # The resumed segment: its calls append after the stored ones, and the route stays.
    code = _call("job_code", "claude-sonnet-4-6", 0.01, input_tokens=500, cache_read_input_tokens=9)
    code_prompt = PromptUse(name="job_code", version="v1", hash="def")
    done = await store.finish_turn(
        "t1", status="completed", calls=[code], prompts={"job_code": code_prompt}
    )
    assert done.route == "planner"
    assert (done.input_tokens, done.cache_read_input_tokens) == (1900, 9)
    assert done.cost_usd == pytest.approx(0.0305)
    assert done.prompts == {"planner": planner_prompt, "job_code": code_prompt}
    assert done.prompt_versions == {"planner": "v3", "job_code": "v1"}

    stored = await store.list_model_calls("t1")
    assert [(c.seq, c.role) for c in stored] == [(0, "router"), (1, "planner"), (2, "job_code")]
    assert [c.usage() for c in stored] == [router, planner, code]
    assert [c.turn_id for c in await store.list_session_model_calls(session_id)] == ["t1"] * 3
    assert [t.id for t in await store.list_turns(session_id)] == ["t1"]


async def test_one_unpriced_call_makes_the_turn_cost_unknown(store: Store) -> None:
    await _turn(store)
    calls = [_call("planner", "claude-opus-4-5", 0.5), _call("job_code", "my-model", None)]
    finished = await store.finish_turn("t1", status="failed", error_code="x", calls=calls)
    assert finished.cost_usd is None
    assert (finished.status, finished.error_code) == ("failed", "x")


async def test_a_turn_without_calls_costs_nothing(store: Store) -> None:
    await _turn(store)
    finished = await store.finish_turn("t1", status="cancelled", error_code="cancelled")
    assert (finished.input_tokens, finished.cost_usd) == (0, 0.0)
    assert await store.list_model_calls("t1") == []


async def test_calls_only_have_the_three_roles(store: Store) -> None:
    await _turn(store)
    bad = ModelCallUsage.model_construct(role="critic", model="m")  # bypasses validation
    with pytest.raises(IntegrityError):
        await store.finish_turn("t1", status="failed", calls=[bad])
    assert await store.list_model_calls("t1") == []  # all or nothing
