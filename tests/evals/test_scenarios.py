"""The scenario files: they parse, reference real fixtures and tools, and cover every category."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from evals.scenario import (
    CATEGORIES,
    FIXTURES_DIR,
    SCENARIOS_DIR,
    Scenario,
    fixture_names,
    load_file,
    load_scenarios,
)
from tools.document import WorkflowDocument
from tools.plan import ProjectPlan
from tools.registry import TOOLS

SCENARIOS = load_scenarios()
SCRIPT_TOOLS = {"planner": set(TOOLS), "router": {"route"}, "job_code": {"edit_job_code"}}


def test_at_least_forty_scenarios_over_every_category() -> None:
    assert len(SCENARIOS) >= 40
    counts = Counter(s.category for s in SCENARIOS)
    assert set(counts) == set(CATEGORIES), set(CATEGORIES) - set(counts)


def test_every_scenario_file_parses_and_ids_are_unique() -> None:
    ids = [s.id for path in sorted(SCENARIOS_DIR.glob("*.yaml")) for s in load_file(path)]
    assert len(ids) == len(set(ids)) == len(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_scenario_start_document_exists_and_parses(scenario: Scenario) -> None:
    if scenario.fixture is not None:
        assert scenario.fixture in fixture_names(), f"unknown fixture {scenario.fixture!r}"
    WorkflowDocument.from_yaml(scenario.start_yaml())


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.script], ids=lambda s: s.id)
def test_scripts_only_call_real_tools(scenario: Scenario) -> None:
    assert scenario.script is not None
    for role, steps in scenario.script.items():
        for step in steps:
            for call in step.tool_calls:
                assert call.name in SCRIPT_TOOLS[role], f"{role} cannot call {call.name}"


def test_vague_and_specific_phrasings_where_it_matters() -> None:
    phrasings: dict[str, set[str]] = {}
    for s in SCENARIOS:
        phrasings.setdefault(s.category, set()).add(s.phrasing)
    for category in ("remove", "rename", "retarget", "conditions", "triggers", "build", "sop"):
        assert {"vague", "specific"} <= phrasings[category], category
    for category in ("add_vague", "ambiguous"):
        assert "vague" in phrasings[category]


def test_model_marks() -> None:
    offline = [s for s in SCENARIOS if s.offline]
    scripted = [
        s
        for s in SCENARIOS
        if (s.plan.proposals is not None if s.plan is not None else s.script is not None)
    ]
    anthropic_only = [s for s in SCENARIOS if s.models == ["anthropic"]]
    assert len(offline) >= 30 and len(scripted) >= 15 and anthropic_only
    assert all("anthropic" in s.models for s in SCENARIOS)
    assert load_scenarios(model="scripted") == scripted


def test_filters_and_errors(tmp_path: Path) -> None:
    assert {s.category for s in load_scenarios(categories=["triggers"])} == {"triggers"}
    assert [s.id for s in load_scenarios(ids=["rename-quoted"])] == ["rename-quoted"]
    (tmp_path / "a.yaml").write_text(
        "- {id: x, category: rename, description: d, turns: [{content: hi}]}\n"
        "- {id: x, category: rename, description: d, turns: [{content: hi}]}\n"
    )
    with pytest.raises(ValueError, match="duplicate scenario id"):
        load_scenarios(tmp_path)
    (tmp_path / "a.yaml").write_text("- {id: x, category: nonsense, description: d, turns: []}\n")
    with pytest.raises(ValueError):
        load_scenarios(tmp_path)


def test_fixtures_cover_the_required_documents() -> None:
    names = fixture_names()
    for wanted in ("referral_intake", "daily_digest", "broken", "injection"):
        assert wanted in names
    injection = (FIXTURES_DIR / "injection.yaml").read_text()
    assert "ignore all previous instructions" in injection


PLANS = [s for s in SCENARIOS if s.plan is not None]


def test_at_least_ten_plan_scenarios_offline_and_scripted() -> None:
    assert len(PLANS) >= 10
    assert len([s for s in PLANS if s.offline]) >= 10
    assert len([s for s in PLANS if "scripted" in s.models]) >= 5
    kinds = {s.category for s in PLANS}
    assert kinds == {c for c in CATEGORIES if c.startswith("plan")}
    graded: set[str] = set()
    for scenario in PLANS:
        assert scenario.plan is not None
        for turn in scenario.plan.turns:
            graded |= set(turn.expect.model_dump(exclude_defaults=True))
    for wanted in ("workflows", "order", "contracts", "revised", "delta", "built", "status"):
        assert wanted in graded, wanted


@pytest.mark.parametrize("scenario", PLANS, ids=lambda s: s.id)
def test_plan_scenarios_read_their_specs_and_script_real_plans(scenario: Scenario) -> None:
    assert scenario.plan is not None
    for turn in scenario.plan.turns:
        assert turn.text().strip()
    for step in scenario.plan.proposals or []:
        if step.plan is not None:
            ProjectPlan.model_validate(step.plan)  # well-formed; check_plan may still refuse it


def test_plan_scenario_format_errors() -> None:
    base = {"id": "p", "category": "plan", "description": "d"}
    turn = {"spec": "## A\n- x\n## B\n- y\n"}
    Scenario.model_validate({**base, "plan": {"turns": [turn]}})
    with pytest.raises(ValueError, match="exactly one of spec and spec_file"):
        Scenario.model_validate({**base, "plan": {"turns": [{**turn, "spec_file": "x"}]}})
    with pytest.raises(ValueError, match="approves or gives feedback"):
        bad = {**turn, "reviews": [{"approve": True, "feedback": "and rename it"}]}
        Scenario.model_validate({**base, "plan": {"turns": [bad]}})
    with pytest.raises(ValueError, match="turns under plan"):
        Scenario.model_validate({**base, "turns": [{"content": "hi"}], "plan": {"turns": [turn]}})
    with pytest.raises(ValueError, match="needs turns"):
        Scenario.model_validate(base)
    with pytest.raises(ValueError, match="a plan or a text"):
        Scenario.model_validate({**base, "plan": {"turns": [turn], "proposals": [{}]}})
