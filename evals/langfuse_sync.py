"""Experiments in Langfuse: the scenarios as a dataset, each eval run as a dataset run.

``sync_dataset`` creates (or updates: items are upserted by a stable id) the
dataset ``planwright-evals`` from the scenario files. ``record_run`` records
an eval run as a Langfuse experiment run named after the model and the prompt
versions (``offline planner=v1,router=v1,...``), with every grader's score
attached to its item (skipped graders, e.g. the judge without a key, are not
sent) plus ``passed`` per item and ``pass_rate`` for the run. Two prompt
versions then compare side by side in Langfuse's dataset view.

The eval runs locally first; the experiment's task replays each scenario's
recorded outcome, so nothing is run twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from statistics import mean
from typing import Any

from evals.runner import EvalRun, ScenarioResult
from evals.scenario import Scenario

DATASET = "planwright-evals"
_NAMESPACE = uuid.UUID("6f1c3f0e-7a52-4b0e-9a43-3d3c8f3e6a10")


def item_id(dataset: str, scenario_id: str) -> str:
    """Stable, globally unique dataset item id for a scenario (re-sync upserts)."""
    return str(uuid.uuid5(_NAMESPACE, f"{dataset}/{scenario_id}"))


def item_input(scenario: Scenario) -> dict[str, Any]:
    if scenario.plan is not None:  # plan mode: the spec turns and their reviews
        turns = [
            {"spec": t.text(), "reviews": [r.kind for r in t.reviews], "read_only": t.read_only}
            for t in scenario.plan.turns
        ]
        return {"scenario": scenario.id, "category": scenario.category, "plan": turns}
    return {
        "scenario": scenario.id,
        "category": scenario.category,
        "start": scenario.fixture or ("inline" if scenario.yaml else "empty"),
        "history": scenario.history,
        "turns": [t.model_dump(exclude_defaults=True) for t in scenario.turns],
    }


def sync_dataset(client: Any, scenarios: Iterable[Scenario], name: str = DATASET) -> int:
    """Create the dataset if needed and upsert one item per scenario; returns the count."""
    from langfuse.api import NotFoundError

    try:
        client.api.datasets.get(dataset_name=name)
    except NotFoundError:
        client.create_dataset(
            name=name,
            description="Planwright acceptance scenarios (evals/scenarios)",
            metadata={"source": "evals/scenarios"},
        )
    count = 0
    for scenario in scenarios:
        client.create_dataset_item(
            dataset_name=name,
            id=item_id(name, scenario.id),
            input=item_input(scenario),
            expected_output=(
                [t.expect.model_dump(exclude_defaults=True) for t in scenario.plan.turns]
                if scenario.plan is not None
                else scenario.expect.model_dump(exclude_defaults=True)
            ),
            metadata={
                "category": scenario.category,
                "description": scenario.description,
                "models": scenario.models,
            },
        )
        count += 1
    return count


def _output(result: ScenarioResult) -> dict[str, Any]:
    runs = result.runs
    first = runs[0].outcome
    return {
        "passed": result.passed,
        "pass_count": sum(r.passed for r in runs),
        "runs": len(runs),
        "reply": first.reply,
        "tool_rounds": mean(r.outcome.tool_rounds for r in runs),
        "tokens": mean(r.outcome.tokens for r in runs),
        "latency_ms": mean(r.outcome.latency_ms for r in runs),
        "yaml": first.after_yaml,
    }


def evaluations(result: ScenarioResult) -> list[dict[str, Any]]:
    """One score per grader (mean over repeats, skipped ones left out), plus ``passed``."""
    by_name: dict[str, list[Any]] = {}
    for run in result.runs:
        for grade in run.grades:
            if not grade.skipped:
                by_name.setdefault(grade.name, []).append(grade)
    scores = []
    for name, grades in by_name.items():
        failing = next((g for g in grades if not g.passed), grades[0])
        scores.append(
            {
                "name": name,
                "value": round(mean(g.score for g in grades), 4),
                "comment": failing.comment[:1000],
            }
        )
    scores.append(
        {
            "name": "passed",
            "value": 1.0 if result.passed else 0.0,
            "comment": f"{sum(r.passed for r in result.runs)}/{len(result.runs)} run(s) passed",
        }
    )
    return scores


def record_run(client: Any, run: EvalRun, name: str = DATASET) -> Any:
    """Record ``run`` as a dataset run (experiment) with every grader score per item."""
    sync_dataset(client, [r.scenario for r in run.results], name)
    dataset = client.get_dataset(name)
    by_item = {item_id(name, r.scenario.id): r for r in run.results}
    items = [item for item in dataset.items if item.id in by_item]

    def task(*, item: Any, **_: Any) -> dict[str, Any]:
        return _output(by_item[item.id])

    def graders(*, input: Any, **_: Any) -> list[dict[str, Any]]:
        return evaluations(by_item[item_id(name, input["scenario"])])

    def pass_rate(**_: Any) -> dict[str, Any]:
        return {"name": "pass_rate", "value": run.pass_rate, "comment": run.run_name}

    return client.run_experiment(
        name="planwright evals",
        run_name=run.run_name,
        description=f"{run.model} ({', '.join(f'{k}={v}' for k, v in run.model_ids.items())})",
        data=items,
        task=task,
        evaluators=[graders],
        run_evaluators=[pass_rate],
        max_concurrency=8,
        metadata={
            "model": run.model,
            "prompts": ",".join(f"{r}={p['version']}#{p['hash']}" for r, p in run.prompts.items()),
            "pass_rate": str(run.pass_rate),
        },
    )
