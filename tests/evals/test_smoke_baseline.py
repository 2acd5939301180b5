"""CI eval smoke run: scripted + offline scenarios must not fall below evals/baseline.json."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from evals.scenario import load_scenarios
from evals.smoke import BASELINE, SMOKE_MODELS, check, failures, run_smoke, smoke_only


async def test_pass_rates_do_not_drop_below_the_committed_baseline() -> None:
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    runs = await run_smoke()
    # Every scenario whose workflow runs here (its adaptors installed) declares its runs.
    problems = check(runs, baseline) + smoke_only(runs)
    details = "\n".join(line for run in runs.values() for line in failures(run))
    assert problems == [], "\n".join(problems) + "\n" + details


def test_check_names_regressions() -> None:
    def result(sid: str, passed: bool) -> SimpleNamespace:
        return SimpleNamespace(passed=passed, scenario=SimpleNamespace(id=sid))

    run: Any = SimpleNamespace(pass_rate=0.5, results=[result("a", True), result("b", False)])
    baseline = {"offline": {"pass_rate": 1.0, "passing": ["a", "b"]}}
    problems = check({"offline": run}, baseline)
    assert problems == ["offline: pass rate 50.0% < baseline 100.0%; now failing: b"]
    assert check({"offline": run}, {"offline": {"pass_rate": 0.5}}) == []
    assert "no baseline" in check({"scripted": run}, {})[0]
    # Scenarios that stopped loading are named, even at the same pass rate.
    fewer = {"offline": {"pass_rate": 0.5, "scenarios": 3, "passing": ["a", "c"]}}
    assert check({"offline": run}, fewer) == ["offline: 2 scenarios < baseline 3; missing: c"]


def test_the_baseline_counts_every_plan_scenario() -> None:
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    for model in SMOKE_MODELS:
        plans = {s.id for s in load_scenarios(model=model) if s.plan is not None}
        assert len(plans) >= 5, model
        counted = set(baseline[model]["passing"]) | set(baseline[model]["failing"])
        assert plans <= counted, (model, sorted(plans - counted))
        assert any(c.startswith("plan") for c in baseline[model]["categories"]), model


def test_smoke_only_names_a_run_without_declared_runs() -> None:
    def result(sid: str, runs: list[str], grade: Any) -> SimpleNamespace:
        scenario = SimpleNamespace(id=sid, expect=SimpleNamespace(runs=runs))
        return SimpleNamespace(scenario=scenario, runs=[SimpleNamespace(grades=[grade])])

    def grade(skipped: bool) -> SimpleNamespace:
        return SimpleNamespace(name="runs_in_openfn", skipped=skipped)

    run: Any = SimpleNamespace(
        results=[
            result("smoke", [], grade(False)),
            result("declared", ["a run"], grade(False)),
            result("not-installed", [], grade(True)),
            result("unchanged", [], SimpleNamespace(name="completed", skipped=False)),
        ]
    )
    assert smoke_only({"offline": run}) == [
        "offline: smoke ran in @openfn/runtime without expect.runs"
    ]
