"""The model sees the whole structure once per turn; tool results carry only the change."""

from __future__ import annotations

import itertools

from agents.models import ScriptedModel
from tests.agents.helpers import resume, run


def _results(model: ScriptedModel, index: int) -> list[str]:
    last = model.requests[index].messages[-1]
    return [b["content"] for b in last["content"] if b.get("type") == "tool_result"]


async def test_structure_goes_once_and_results_carry_the_changed_entries() -> None:
    model = ScriptedModel(
        [
            ScriptedModel.tool_calls(
                ("update_jobs", {"jobs": [{"key": "check", "new_key": "verify"}]})
            ),
            ScriptedModel.tool_calls(("update_workflow", {"name": "Intake"})),
            ScriptedModel.text("Done."),
        ]
    )
    await run(model, "rename check to verify, then the workflow to Intake")
    first = model.requests[0].messages[-1]["content"]
    assert "- fetch: 'Fetch referral'" in first  # the whole structure, once
    (renamed,) = _results(model, 1)
    assert "Changed entries as they are now:" in renamed
    assert "- verify: 'Check coverage' [fhir]" in renamed
    assert "- fetch -> verify\n" in renamed + "\n"  # its re-keyed edge, as it now is
    assert "'Fetch referral'" not in renamed  # untouched steps are not repeated
    assert "Trigger webhook" not in renamed
    (named,) = _results(model, 2)
    assert "Workflow: Intake" in named and "Steps:" not in named
    # later requests never repeat the structure: it appears in the first user message only
    final = model.requests[2].messages
    assert sum("- fetch: 'Fetch referral'" in str(m["content"]) for m in final) == 1


async def test_removed_entries_are_named_in_the_result() -> None:
    model = ScriptedModel(
        [
            ScriptedModel.tool_calls(
                ("remove_edges", {"edges": [{"source": "fetch", "target": "check"}]})
            ),
            ScriptedModel.text("Removed."),
        ]
    )
    paused = await run(model, "disconnect fetch from check")
    assert paused.last["type"] == "confirm.required"  # a connection is removed: it asks first
    await resume(paused, approved=True)
    (result,) = _results(model, 1)
    assert "Removed: edge fetch->check" in result, result


def _exchange(i: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"question {i}: " + "about the intake steps " * 20},
        {"role": "assistant", "content": f"answer {i}: " + "the steps are fine " * 20},
    ]


async def test_history_is_trimmed_in_blocks_between_a_high_and_a_low_water_mark() -> None:
    from agents.budget import LOW_WATER, TRIMMED, trim_history
    from agents.tokens import local_token_counter

    counter = local_token_counter()
    budget = 1000
    history: list[dict[str, str]] = []
    starts: list[str] = []
    for i in range(30):
        history += _exchange(i)
        kept = await trim_history(history, budget, counter)
        assert kept == history[-len(kept) :]  # the newest, in order, untouched
        assert kept[0]["role"] == "user"
        total = sum(counter.count_now(m["content"]) for m in kept)
        assert total <= budget
        if starts and kept[0]["content"] != starts[-1]:  # a trim: down to the low mark
            assert total <= budget * LOW_WATER + counter.count_now(history[-1]["content"]) * 2
        starts.append(kept[0]["content"])
    # most turns send the same first message as the turn before: the cache's prefix holds
    moves = sum(a != b for a, b in itertools.pairwise(starts))
    assert 1 <= moves <= len(starts) // 3
    long_answer = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "y " * 4000}]
    trimmed = await trim_history(long_answer, budget, counter)
    assert trimmed[-1]["content"].endswith(TRIMMED)
    assert counter.count_now(trimmed[-1]["content"]) <= budget // 2
    assert trimmed[0] == {"role": "user", "content": "q"}


async def test_the_planner_sends_history_trimmed_to_the_configured_budget() -> None:
    from agents.tokens import local_token_counter

    long_answer = "Here is everything about the workflow. " * 2000  # ~16K tokens
    history = [
        {"role": "user", "content": "an old question"},
        {"role": "assistant", "content": "an old answer"},
        {"role": "user", "content": "explain it all"},
        {"role": "assistant", "content": long_answer},
    ]
    model = ScriptedModel([ScriptedModel.text("Sure.")])
    await run(model, "and now?", history=history, config={"history_token_budget": 2000})
    messages = model.requests[0].messages
    count = local_token_counter().count_now
    assert sum(count(str(m["content"])) for m in messages[:-1]) <= 2000
    assert messages[-2]["role"] == "assistant" and "left out" in messages[-2]["content"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert model.requests[0].context.history[-1]["content"] == messages[-2]["content"]
    assert model.requests[0].history_messages == 4


async def test_a_message_over_the_limit_is_a_coded_error_before_any_model_call() -> None:
    import pytest

    from agents.budget import MessageTooLongError

    model = ScriptedModel([])
    with pytest.raises(MessageTooLongError) as info:
        await run(model, "referral " * 101, config={"max_message_tokens": 100})
    assert info.value.code == "message_too_long"
    from agents.tokens import local_token_counter

    counted = local_token_counter().count_now("referral " * 101)
    assert counted > 100 and f"{counted} tokens" in info.value.message
    assert model.requests == []
    fits = ScriptedModel([ScriptedModel.text("ok")])
    await run(fits, "referral " * 90, config={"max_message_tokens": 100})
    assert len(fits.requests) == 1
