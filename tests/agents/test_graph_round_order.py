"""A round's structural tools run before its code requests are checked and fanned out.

Regressions for review finding H3: a code request plus a structural change to
the same step in one round used to crash the turn (the request was validated
before the rename/removal ran, then the sub-agent looked the old key up), and
a request for a step created later in the same round was refused.
"""

from __future__ import annotations

from typing import Any

from agents.models import ModelRequest, ModelResponse, ScriptedModel
from agents.nodes.code_agent import run_code_agent
from tests.agents.helpers import BASE_YAML, by_role, resume, run, runtime_for
from tools.document import WorkflowDocument

S = ScriptedModel


def _code_for(request: ModelRequest) -> ModelResponse:
    key = request.context.job_key
    return S.tool_calls(
        ("edit_job_code", {"edits": [{"action": "rewrite", "new_code": f"get('/{key}');\n"}]})
    )


def _ids_in_order(planner: ScriptedModel, request_index: int) -> tuple[list[str], list[str]]:
    """(tool_use ids of the assistant message, tool_result ids answering it)."""
    messages = planner.requests[request_index].messages
    uses = [b["id"] for b in messages[-2]["content"] if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in messages[-1]["content"]]
    return uses, results


async def test_code_request_then_removal_of_that_step_is_an_error_result_not_a_crash() -> None:
    planner = ScriptedModel(
        [
            S.tool_calls(
                ("call_job_code_agent", {"job_key": "check", "message": "look up coverage"}),
                ("remove_jobs", {"keys": ["check"]}),
            ),
            S.text("Removed Check coverage; there was no step left to write code for."),
        ]
    )
    coder = ScriptedModel([])
    paused = await run(by_role(planner=planner, job_code=coder), "write it, then drop it")
    assert paused.last["type"] == "confirm.required"  # a step is removed: it asks first
    outcome = await resume(paused, approved=True)
    assert outcome.last["type"] == "turn.completed"
    assert "check" not in outcome.doc.structure.jobs
    assert coder.requests == []
    uses, results = _ids_in_order(planner, 1)
    assert uses == results
    code_result, remove_result = planner.requests[1].messages[-1]["content"]
    assert code_result["is_error"] and "unknown_job" in code_result["content"]
    assert not remove_result.get("is_error")
    assert [f["version"] for f in outcome.of("workflow")] == [2]


async def test_code_request_then_key_rename_names_the_old_key_and_is_refused() -> None:
    planner = ScriptedModel(
        [
            S.tool_calls(
                ("call_job_code_agent", {"job_key": "check", "message": "look up coverage"}),
                ("update_jobs", {"jobs": [{"key": "check", "new_key": "verify"}]}),
            ),
            S.text("Renamed the step; I'll write its code next."),
        ]
    )
    coder = ScriptedModel([])
    outcome = await run(by_role(planner=planner, job_code=coder), "rename and write")
    assert outcome.last["type"] == "turn.completed"
    assert "verify" in outcome.doc.structure.jobs
    assert coder.requests == []
    code_result, rename_result = planner.requests[1].messages[-1]["content"]
    assert code_result["is_error"] and "unknown_job" in code_result["content"]
    assert "verify" in code_result["content"]  # the listing points at the new key
    assert not rename_result.get("is_error")


async def test_code_request_before_the_add_jobs_that_creates_the_step_runs() -> None:
    planner = ScriptedModel(
        [
            S.tool_calls(
                ("call_job_code_agent", {"job_key": "notify", "message": "post a notice"}),
                ("add_jobs", {"jobs": [{"name": "Notify", "adaptor": "http"}]}),
                ("add_edges", {"edges": [{"source": "check", "target": "notify"}]}),
            ),
            S.text("Added Notify and wrote its code."),
        ]
    )
    coder = ScriptedModel([_code_for])
    outcome = await run(by_role(planner=planner, job_code=coder), "add notify with code")
    assert outcome.doc.structure.jobs["notify"].body == "get('/notify');"
    assert [r.context.job_key for r in coder.requests] == ["notify"]
    uses, results = _ids_in_order(planner, 1)
    assert uses == results
    assert all(not r.get("is_error") for r in planner.requests[1].messages[-1]["content"])
    assert [f["version"] for f in outcome.of("workflow")] == [2, 3, 4]


async def test_code_request_for_a_step_renamed_to_its_key_in_the_same_round_runs() -> None:
    planner = ScriptedModel(
        [
            S.tool_calls(
                ("call_job_code_agent", {"job_key": "verify", "message": "look up coverage"}),
                ("update_jobs", {"jobs": [{"key": "check", "new_key": "verify"}]}),
            ),
            S.text("Renamed and wrote the code."),
        ]
    )
    coder = ScriptedModel([_code_for])
    outcome = await run(by_role(planner=planner, job_code=coder), "rename and write")
    assert outcome.doc.structure.jobs["verify"].body == "get('/verify');"
    results = planner.requests[1].messages[-1]["content"]
    assert [bool(r.get("is_error")) for r in results] == [False, False]


async def test_sub_agent_on_a_step_that_is_gone_reports_code_not_written() -> None:
    coder = ScriptedModel([])
    rt = runtime_for(coder)
    doc = WorkflowDocument.from_yaml(BASE_YAML)
    events: list[dict[str, Any]] = []
    result = await run_code_agent(rt, doc, "ghost", "write it", events.append)
    assert result.body is None
    assert result.error and "ghost" in result.error
    assert coder.requests == []
