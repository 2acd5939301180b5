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
    scripted = [s for s in SCENARIOS if s.script is not None]
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
