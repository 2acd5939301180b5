"""The plan model: its checks (each with its stable code), contracts, order and delta."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tools.plan import (
    PlannedTrigger,
    PlannedWorkflow,
    ProjectPlan,
    check_plan,
    contracts,
    leaf_first_order,
    plan_delta,
)
from tools.plan.tool import run_propose_plan

WEBHOOK = PlannedTrigger(type="webhook")


def wf(key: str, *, after: tuple[str, ...] = (), **fields: Any) -> PlannedWorkflow:
    return PlannedWorkflow(
        key=key,
        name=fields.pop("name", key.title()),
        purpose=f"{key}.",
        trigger=fields.pop("trigger", WEBHOOK),
        depends_on=list(after),
        **fields,
    )


def plan(*workflows: PlannedWorkflow, order: list[str] | None = None) -> ProjectPlan:
    return ProjectPlan(
        summary="s",
        workflows=list(workflows),
        order=order if order is not None else leaf_first_order(list(workflows)),
    )


def codes(p: ProjectPlan) -> list[str]:
    return [problem.code for problem in check_plan(p)]


def test_a_sound_plan_has_no_problems() -> None:
    assert codes(plan(wf("intake"), wf("coverage", after=("intake",)))) == []


@pytest.mark.parametrize(
    ("workflows", "order", "code"),
    [
        ([wf("a"), wf("a")], ["a"], "duplicate_key"),
        ([wf("a", after=("ghost",))], ["a"], "unknown_dependency"),
        ([wf("a", after=("a",))], ["a"], "self_dependency"),
        ([wf("a", after=("b",)), wf("b", after=("a",))], ["a", "b"], "dependency_cycle"),
        ([wf("a"), wf("b")], ["a"], "order_mismatch"),
        ([wf("a"), wf("b")], ["a", "b", "b"], "order_mismatch"),
        ([wf("a"), wf("b", after=("a",))], ["b", "a"], "order_not_leaf_first"),
        (
            [
                wf("a"),
                wf(
                    "b",
                    after=("a",),
                    trigger=PlannedTrigger(type="cron", cron_expression="0 7 * * *"),
                ),
            ],
            ["a", "b"],
            "trigger_mismatch",
        ),
        ([wf("a", trigger=PlannedTrigger(type="cron"))], ["a"], "trigger_mismatch"),
        (
            [wf("a", trigger=PlannedTrigger(type="cron", cron_expression="every day"))],
            ["a"],
            "invalid_cron",
        ),
    ],
)
def test_each_problem_has_its_code(
    workflows: list[PlannedWorkflow], order: list[str], code: str
) -> None:
    assert code in codes(plan(*workflows, order=order))


def test_leaf_first_order_keeps_the_given_order_where_it_can() -> None:
    workflows = [wf("report"), wf("coverage", after=("intake",)), wf("intake")]
    assert leaf_first_order(workflows) == ["report", "intake", "coverage"]


def test_contracts_name_what_is_handed_over_and_where() -> None:
    p = plan(
        wf("intake", outputs=["referral", "audit"]),
        wf("coverage", after=("intake",), inputs=["referral"]),
        wf("docs", after=("intake",)),
    )
    found = {(c.source, c.target): c for c in contracts(p, "acme")}
    assert found[("intake", "coverage")].data == ["referral"]
    assert found[("intake", "docs")].data == ["referral", "audit"]  # names none: all of it
    assert found[("intake", "coverage")].webhook_path == "acme-coverage"


def test_the_delta_is_by_key() -> None:
    old = plan(wf("intake", steps=["Fetch it"]), wf("coverage", after=("intake",)), wf("old"))
    new = plan(
        wf("intake", steps=["Fetch it", "Save it"]), wf("coverage", after=("intake",)), wf("report")
    )
    delta = plan_delta(old, new)
    assert delta.added == ["report"] and delta.removed == ["old"]
    assert [(c.key, c.fields) for c in delta.changed] == [("intake", ["steps"])]
    assert delta.unchanged == ["coverage"] and delta.to_build() == ["report", "intake"]
    assert plan_delta(new, new).empty


def test_oversized_or_malformed_input_is_refused_by_the_schema() -> None:
    with pytest.raises(ValidationError):
        wf("intake", steps=["x" * 501])
    with pytest.raises(ValidationError):
        wf("Not A Key")
    result = run_propose_plan({"summary": "s", "workflows": [], "order": []})
    assert not result.ok and result.error_code == "invalid_arguments"
    assert "The workflow was not changed" not in result.text  # a plan changes no workflow


def test_the_tool_returns_the_checked_plan_and_its_contracts() -> None:
    p = plan(wf("intake", outputs=["referral"]), wf("coverage", after=("intake",)))
    result = run_propose_plan(p.model_dump(mode="json"), project_slug="acme")
    assert result.ok and result.data is not None
    assert ProjectPlan.model_validate(result.data["plan"]) == p
    assert result.data["contracts"][0]["webhook_path"] == "acme-coverage"
    cyclic = plan(wf("a", after=("b",)), wf("b", after=("a",)), order=["a", "b"])
    refused = run_propose_plan(cyclic.model_dump(mode="json"))
    assert not refused.ok and refused.error_code == "dependency_cycle"
