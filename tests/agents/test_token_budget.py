"""The model sees the whole structure once per turn; tool results carry only the change."""

from __future__ import annotations

from agents.models import ScriptedModel
from tests.agents.helpers import run


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
    assert "- fetch -> verify: on_job_success" in renamed  # its re-keyed edge, as it now is
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
    await run(model, "disconnect fetch from check")
    (result,) = _results(model, 1)
    assert "Removed: edge fetch->check" in result, result
