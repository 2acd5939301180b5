"""Failures inside a turn: sub-agents, the code model's replies, the router.

Regressions for review findings M5 (a failing sub-agent killed the turn), M6
(a retry answered only one of several tool_uses) and L1 (router crashes).
"""

from __future__ import annotations

import logging

import pytest

from agents.models import ModelError, ModelRequest, ModelResponse, ScriptedModel
from agents.models.base import Usage
from tests.agents.helpers import by_role, run

S = ScriptedModel


def _rewrite(code: str) -> tuple[str, dict[str, object]]:
    return ("edit_job_code", {"edits": [{"action": "rewrite", "new_code": code}]})


def _two_code_requests() -> ScriptedModel:
    return ScriptedModel(
        [
            S.tool_calls(
                ("call_job_code_agent", {"job_key": "fetch", "message": "fetch referrals"}),
                ("call_job_code_agent", {"job_key": "check", "message": "look up coverage"}),
            ),
            S.text("Wrote Fetch referral; the coverage check failed."),
        ]
    )


@pytest.mark.parametrize(
    "failure",
    [ModelError("overloaded, gave up"), RuntimeError("socket closed")],
    ids=["model-error", "any-exception"],
)
async def test_a_failing_sub_agent_is_reported_and_the_others_code_is_stitched(
    failure: Exception,
) -> None:
    def code_or_fail(request: ModelRequest) -> ModelResponse:
        if request.context.job_key == "check":
            raise failure
        return S.tool_calls(_rewrite("get('/fetched');"))

    planner = _two_code_requests()
    coder = ScriptedModel([code_or_fail, code_or_fail])
    outcome = await run(by_role(planner=planner, job_code=coder), "write both")
    assert outcome.last["type"] == "turn.completed"
    assert outcome.doc.structure.jobs["fetch"].body.rstrip() == "get('/fetched');"
    assert outcome.doc.structure.jobs["check"].body == "// Add operations here"
    fetch_result, check_result = planner.requests[1].messages[-1]["content"]
    assert not fetch_result.get("is_error")
    assert check_result["is_error"] and "code_not_written" in check_result["content"]
    assert str(failure) in check_result["content"]
    assert outcome.of("message")[0]["text"] == "Wrote Fetch referral; the coverage check failed."
    settled = [e["text"] for e in outcome.of("status") if e["phase"] == "settled"]
    assert "Could not write code for Check coverage" in settled


async def test_a_model_error_in_the_planner_still_ends_the_turn() -> None:
    planner = ScriptedModel([ModelError("planner down")])
    with pytest.raises(ModelError, match="planner down"):
        await run(by_role(planner=planner, job_code=ScriptedModel([])), "hello")


def _one_code_request() -> ScriptedModel:
    return ScriptedModel(
        [
            S.tool_calls(("call_job_code_agent", {"job_key": "check", "message": "write it"})),
            S.text("Done."),
        ]
    )


async def test_retry_answers_every_tool_use_of_the_failed_reply() -> None:
    coder = ScriptedModel(
        [
            S.tool_calls(
                (
                    "edit_job_code",
                    {"edits": [{"action": "replace", "old_code": "nope", "new_code": "x"}]},
                ),
                _rewrite("get('/c');"),
                ("lookup", {"q": "x"}),
            ),
            S.tool_calls(_rewrite("get('/fixed');")),
        ]
    )
    outcome = await run(by_role(planner=_one_code_request(), job_code=coder), "write it")
    retry = coder.requests[1].messages
    asked = [b["id"] for b in retry[-2]["content"] if b["type"] == "tool_use"]
    answered = retry[-1]["content"]
    assert [b["tool_use_id"] for b in answered] == asked
    assert all(b["type"] == "tool_result" and b["is_error"] for b in answered)
    assert "old_code was not found" in answered[0]["content"]
    assert "not applied" in answered[1]["content"]
    assert "only edit_job_code" in answered[2]["content"]
    assert outcome.doc.structure.jobs["check"].body == "get('/fixed');"


async def test_problems_in_a_reply_are_checked_on_its_final_code() -> None:
    coder = ScriptedModel(
        [
            S.tool_calls(_rewrite("get('/a');"), _rewrite("get(")),
            S.tool_calls(_rewrite("get('/fixed');")),
        ]
    )
    outcome = await run(by_role(planner=_one_code_request(), job_code=coder), "write it")
    first, second = coder.requests[1].messages[-1]["content"]
    assert "not applied" in first["content"]
    assert "never closed" in second["content"]
    assert outcome.doc.structure.jobs["check"].body == "get('/fixed');"


async def test_edit_calls_of_one_reply_apply_in_sequence() -> None:
    coder = ScriptedModel(
        [
            S.tool_calls(
                _rewrite("get('/a');"),
                (
                    "edit_job_code",
                    {"edits": [{"action": "replace", "old_code": "/a", "new_code": "/b"}]},
                ),
            )
        ]
    )
    outcome = await run(by_role(planner=_one_code_request(), job_code=coder), "write it")
    assert outcome.doc.structure.jobs["check"].body == "get('/b');"
    assert len(coder.requests) == 1


def _route_without_input() -> ModelResponse:
    return ModelResponse(
        content=[{"type": "tool_use", "id": "toolu_r", "name": "route"}],
        stop_reason="tool_use",
        usage=Usage(),
        model="scripted",
    )


@pytest.mark.parametrize(
    "answer",
    [_route_without_input(), RuntimeError("connection reset"), KeyError("content")],
    ids=["no-input", "runtime-error", "key-error"],
)
async def test_router_crashes_fall_back_to_the_planner(
    answer: object, caplog: pytest.LogCaptureFixture
) -> None:
    router = ScriptedModel([answer])  # type: ignore[list-item]
    planner = ScriptedModel([S.text("Sure.")])
    with caplog.at_level(logging.WARNING, logger="agents.nodes.route"):
        outcome = await run(
            by_role(router=router, planner=planner, job_code=ScriptedModel([])),
            "fix the code",
            page="job",
            job_key="check",
        )
    assert outcome.of("route") == [{"type": "route", "destination": "planner"}]
    assert outcome.of("message")[0]["text"] == "Sure."
    assert any("router" in r.getMessage().lower() for r in caplog.records)
