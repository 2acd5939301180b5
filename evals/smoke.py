"""The CI eval smoke run: scripted + offline scenarios against ``evals/baseline.json``.

Fails (exit 1) when a model's pass rate drops below its committed baseline
(naming the scenarios that passed in the baseline and fail now), or when a
scenario's final workflow ran in OpenFn's runtime without ``expect.runs`` (every
scenario whose adaptors are installed here gives a sample and its path). No network: no
judge, no Langfuse. ``python -m evals.smoke --update`` rewrites the baseline
(do it deliberately, in the commit that changes the pass rate).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.graders.runtime import NAME as RUNTIME_GRADER
from evals.runner import EvalOptions, EvalRun, Progress, run_eval, summary
from evals.scenario import EVALS_DIR, load_scenarios

BASELINE = EVALS_DIR / "baseline.json"
SMOKE_MODELS = ("scripted", "offline")


async def run_smoke(models: Sequence[str] = SMOKE_MODELS) -> dict[str, EvalRun]:
    runs = {}
    for model in models:
        scenarios = load_scenarios(model=model)
        quiet = Progress(len(scenarios), stream=io.StringIO())
        options = EvalOptions(model=model, concurrency=8, judge=False)
        runs[model] = await run_eval(options, scenarios=scenarios, progress=quiet)
    return runs


def baseline_entry(run: EvalRun) -> dict[str, Any]:
    return {
        "pass_rate": run.pass_rate,
        "scenarios": len(run.results),
        "categories": summary(run)["categories"],
        "passing": sorted(r.scenario.id for r in run.results if r.passed),
        "failing": sorted(r.scenario.id for r in run.results if not r.passed),
    }


def check(runs: dict[str, EvalRun], baseline: dict[str, Any]) -> list[str]:
    """Problems (empty when every model is at or above its baseline pass rate)."""
    problems = []
    for model, run in runs.items():
        expected = baseline.get(model)
        if expected is None:
            problems.append(f"{model}: no baseline in {BASELINE.name}")
            continue
        # Fewer scenarios than the baseline counted (a file or a plan section that no
        # longer loads) would let the pass rate hold while less is checked.
        if len(run.results) < expected.get("scenarios", 0):
            missing = sorted(
                set(expected.get("passing", [])) - {r.scenario.id for r in run.results}
            )
            problems.append(
                f"{model}: {len(run.results)} scenarios < baseline {expected['scenarios']}"
                + (f"; missing: {', '.join(missing[:10])}" if missing else "")
            )
        if run.pass_rate < expected["pass_rate"]:
            now_failing = sorted(
                r.scenario.id
                for r in run.results
                if not r.passed and r.scenario.id in set(expected.get("passing", []))
            )
            problems.append(
                f"{model}: pass rate {run.pass_rate:.1%} < baseline {expected['pass_rate']:.1%}"
                + (f"; now failing: {', '.join(now_failing)}" if now_failing else "")
            )
    return problems


def smoke_only(runs: dict[str, EvalRun]) -> list[str]:
    """Scenarios whose final workflow ran in OpenFn's runtime (``runs_in_openfn`` neither
    skipped nor left out: every adaptor installed here) on a bare smoke run, i.e. with no
    ``expect.runs``: each such scenario must say which sample takes which path."""
    found = []
    for model, run in runs.items():
        for result in run.results:
            if result.scenario.expect.runs:
                continue
            ran = any(
                g.name == RUNTIME_GRADER and not g.skipped for r in result.runs for g in r.grades
            )
            if ran:
                found.append(
                    f"{model}: {result.scenario.id} ran in @openfn/runtime without expect.runs"
                )
    return found


def failures(run: EvalRun) -> list[str]:
    lines = []
    for result in run.results:
        if result.passed:
            continue
        grades = [g for r in result.runs for g in r.grades if not g.passed and not g.skipped]
        detail = "; ".join(f"{g.name}: {g.comment}" for g in grades[:3])
        lines.append(f"  {result.scenario.id}: {detail}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.smoke", description=__doc__)
    parser.add_argument("--update", action="store_true", help=f"rewrite {BASELINE.name}")
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    args = parser.parse_args(argv)
    runs = asyncio.run(run_smoke())
    for model, run in runs.items():
        print(f"{model}: pass rate {run.pass_rate:.1%} ({len(run.results)} scenarios)")
        for line in failures(run):
            print(line)
    if args.update:
        data = {
            "note": "Committed pass rates of the CI eval smoke run (python -m evals.smoke).",
            **{model: baseline_entry(run) for model, run in runs.items()},
        }
        args.baseline.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.baseline}")
        return 0
    problems = check(runs, json.loads(args.baseline.read_text(encoding="utf-8"))) + smoke_only(runs)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
