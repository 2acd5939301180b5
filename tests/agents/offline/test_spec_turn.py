"""Plan turns of the offline model: a spec or feedback on a plan -> one ``propose_plan``
call or a refusal; after the call's result, a short answer."""

from __future__ import annotations

from typing import Any

from agents.offline.spec import read_spec
from tests.agents.offline.plan_helpers import SPECS, ask, example, project
from tools.plan import ProjectPlan


def test_a_spec_on_a_plan_turn_is_one_propose_plan_call() -> None:
    text = (SPECS / "four_processes.md").read_text()
    response = ask(text, project=project())
    assert response.stop_reason == "tool_use"
    (use,) = response.tool_uses
    assert use["name"] == "propose_plan"
    assert ProjectPlan.model_validate(use["input"]) == read_spec(text)
    assert "intake → coverage-check" in response.text


def test_a_text_that_is_not_a_spec_is_answered_and_nothing_is_proposed() -> None:
    response = ask("# Referral intake system\n\nWe take referrals in.", project=project())
    assert response.stop_reason == "end_turn" and response.tool_uses == []
    assert "nothing was changed" in response.text


def test_feedback_while_revising_gives_the_revised_plan() -> None:
    plan = example("four_processes.md")
    response = ask("remove Status report", project=project(plan, revising=True))
    (use,) = response.tool_uses
    revised = ProjectPlan.model_validate(use["input"])
    assert [w.key for w in revised.workflows] == [
        "intake",
        "coverage-check",
        "document-verification",
    ]
    unclear = ask("make it nicer", project=project(plan, revising=True))
    assert unclear.tool_uses == [] and "the plan is unchanged" in unclear.text


def test_after_the_propose_plan_result_a_short_answer() -> None:
    text = (SPECS / "four_processes.md").read_text()
    first = ask(text, project=project())
    (use,) = first.tool_uses
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": use["id"],
        "content": "Plan approved.",
    }
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": text},
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [result]},
    ]
    done = ask(text, project=project(), messages=messages)
    assert done.stop_reason == "end_turn"
    assert done.text.startswith("Proposed a plan of 4 workflows (Intake, Coverage check,")
    assert "Plan approved." in done.text
    result.update(content="Error: the plan has a cycle", is_error=True)
    failed = ask(text, project=project(), messages=messages)
    assert failed.text.startswith("The plan could not be proposed: Error: the plan has a cycle")


def test_without_propose_plan_a_project_turn_plans_as_usual() -> None:
    # A build run inside a project: its request is an ordinary build.
    plan = example("four_processes.md")
    request = (
        'Create a workflow called "Intake":\nTrigger: webhook\n1. Fetch the referral\n2. Save it'
    )
    response = ask(request, project=project(plan), tools=[{"name": "create_workflow"}])
    assert [u["name"] for u in response.tool_uses] == ["create_workflow"]


def test_a_spec_for_a_built_project_keeps_the_built_keys() -> None:
    built = example("four_processes.md")
    renamed = built.model_copy(deep=True)
    renamed.workflows[1].name = "Eligibility check"
    text = (SPECS / "four_processes.md").read_text().replace("Coverage check", "Eligibility check")
    (use,) = ask(text, project=project(renamed)).tool_uses
    keys = [w["key"] for w in use["input"]["workflows"]]
    assert keys == ["intake", "coverage-check", "document-verification", "status-report"]


def test_a_plan_the_offline_builds_would_refuse_is_not_proposed() -> None:
    text = "## Intake\n- Save it\n- Otherwise log it\n\n## Report\n- Send it\n"
    response = ask(text, project=project())
    assert response.tool_uses == []
    assert "could not build every workflow from its steps, so nothing was changed" in response.text
    assert (
        '- "Intake":' in response.text and 'I could not place "Otherwise log it"' in response.text
    )
    plan = example("four_processes.md")
    revising = project(plan, revising=True)
    response = ask("add a step to Status report: Otherwise log it", project=revising)
    assert response.tool_uses == []
    assert "the plan is unchanged" in response.text and '- "Status report":' in response.text
