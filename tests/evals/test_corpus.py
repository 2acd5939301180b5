"""The realistic corpus (evals/scenarios/corpus.yaml) through the offline model.

Precise or silent: a request is either built exactly as expected (every step, edge
and the trigger) or refused without changing anything. A *wrong build* is any run
that changed the document but does not match its expectation; there must be none.
At least 75% of the corpus must be built (the rest are honest refusals).
"""

from __future__ import annotations

import asyncio
import io
from types import SimpleNamespace

import pytest

from evals.graders.behaviour import mutation_policy
from evals.runner import EvalOptions, EvalRun, Progress, run_eval
from evals.scenario import load_scenarios

CORPUS = [s for s in load_scenarios(model="offline") if s.id.startswith("corpus-")]


@pytest.fixture(scope="module")
def corpus_run() -> EvalRun:
    options = EvalOptions(model="offline", concurrency=4, repeat=1, judge=False)
    progress = Progress(len(CORPUS), stream=io.StringIO())
    return asyncio.run(run_eval(options, scenarios=CORPUS, progress=progress))


def test_the_corpus_is_large_and_holds_the_seed_descriptions() -> None:
    ids = {s.id for s in CORPUS}
    assert len(CORPUS) >= 43
    assert {"corpus-00-linda-seed", "corpus-01-maria-seed", "corpus-02-james-seed"} <= ids
    built = [s for s in CORPUS if s.expect.mutation == "required"]
    # Every build expectation is complete: all steps, all edges and the trigger.
    for scenario in built:
        assert scenario.expect.job_count == len(scenario.expect.jobs), scenario.id
        assert scenario.expect.edge_count is not None, scenario.id
        assert scenario.expect.trigger is not None, scenario.id
    for scenario in CORPUS:
        if scenario.expect.mutation == "none":
            assert "changed nothing" in scenario.expect.reply_contains, scenario.id


def test_zero_wrong_builds_and_at_least_three_quarters_built(corpus_run: EvalRun) -> None:
    wrong, refused_instead, built = [], [], []
    for result in corpus_run.results:
        run = result.runs[0]
        changed = run.outcome.mutations > 0 or run.outcome.after_yaml != run.outcome.before_yaml
        if changed and not run.passed:
            wrong.append(result.scenario.id)
        elif changed:
            built.append(result.scenario.id)
        elif not run.passed:
            refused_instead.append(result.scenario.id)
    assert wrong == []
    failing = {
        r.scenario.id: [g.comment for g in r.runs[0].grades if not g.passed]
        for r in corpus_run.results
        if not r.passed
    }
    assert failing == {}
    assert refused_instead == []
    assert len(built) / len(CORPUS) >= 0.75, (len(built), len(CORPUS))


def test_a_refusal_that_changed_something_is_a_wrong_build() -> None:
    """The grader the corpus relies on: 'mutation: none' fails when anything changed."""
    refusal = next(s for s in CORPUS if s.expect.mutation == "none")

    changed = SimpleNamespace(mutations=1, before_yaml="a", after_yaml="b", tool_calls=[])
    grade = mutation_policy(refusal, changed)  # type: ignore[arg-type]
    assert grade is not None and not grade.passed
