"""Edit latency: one mutation (validate, apply, emit the YAML to stream) vs a full dump.

Prints one JSON object:
  mutation_p50_ms / mutation_p95_ms: {job_count: ms} for one tool call through
      ``run_tool`` (validation, the write, the redacted result) plus ``to_yaml()``;
  full_dump_p50_ms: {job_count: ms} for a from-scratch ruamel dump of the same document;
  cold_first_mutation_ms: {job_count: ms} for parsing the YAML, the first emission and one
      mutation: what the first turn on a workflow pays once (the service keeps the parsed
      document warm between turns afterwards).
Target: mutation p50 <= 10 ms at 200 jobs.
"""

from __future__ import annotations

import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.base import ToolContext
from tools.document import WorkflowDocument
from tools.registry import run_tool

SIZES = (10, 50, 200, 1000)


def build_document(jobs: int) -> WorkflowDocument:
    """A linear workflow of ``jobs`` steps with code, a webhook trigger and comments."""
    lines = ["# Benchmark workflow", "name: Bench", "jobs:"]
    for i in range(jobs):
        lines += [
            f"  step-{i}:   # step {i}",
            f"    id: 00000000-0000-4000-8000-{i:012d}",
            f"    name: Step {i}",
            "    adaptor: '@openfn/language-http@latest'",
            "    body: |",
            f"      get('/items/{i}');",
            "      fn(state => ({ ...state, seen: true }));",
        ]
    lines += [
        "triggers:",
        "  webhook:",
        "    id: 10000000-0000-4000-8000-000000000000",
        "    type: webhook",
        "    enabled: false",
        "edges:",
        "  webhook->step-0:",
        "    id: 20000000-0000-4000-8000-000000000000",
        "    source_trigger: webhook",
        "    target_job: step-0",
        "    condition_type: always",
        "    enabled: true",
    ]
    for i in range(jobs - 1):
        lines += [
            f"  step-{i}->step-{i + 1}:",
            f"    id: 30000000-0000-4000-8000-{i:012d}",
            f"    source_job: step-{i}",
            f"    target_job: step-{i + 1}",
            "    condition_type: on_job_success",
            "    enabled: true",
        ]
    return WorkflowDocument.from_yaml("\n".join(lines) + "\n")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def time_calls(fn: Callable[[int], None], repeats: int) -> list[float]:
    samples = []
    for i in range(repeats):
        start = time.perf_counter()
        fn(i + 1)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    counter = itertools.count()
    ctx = ToolContext(new_id=lambda: f"40000000-0000-4000-8000-{next(counter):012d}")
    result: dict[str, dict[str, float]] = {
        "mutation_p50_ms": {},
        "mutation_p95_ms": {},
        "full_dump_p50_ms": {},
        "cold_first_mutation_ms": {},
    }
    for jobs in SIZES:
        text = build_document(jobs).to_yaml()
        middle = jobs // 2
        start = time.perf_counter()
        doc = WorkflowDocument.from_yaml(text)
        doc.to_yaml()  # the first emission fills the fragment cache
        cold = run_tool(
            doc, "update_jobs", {"jobs": [{"key": f"step-{middle}", "name": "Cold"}]}, context=ctx
        )
        assert cold.ok, cold.text
        doc.to_yaml()
        result["cold_first_mutation_ms"][str(jobs)] = round((time.perf_counter() - start) * 1000, 1)

        def mutate(i: int, doc: WorkflowDocument = doc, middle: int = middle) -> None:
            # Alternate realistic edits: rename a step, toggle an edge condition.
            if i % 2 == 0:
                args = {"jobs": [{"key": f"step-{middle}", "name": f"Step {middle} v{i}"}]}
                outcome = run_tool(doc, "update_jobs", args, context=ctx)
            else:
                condition = "on_job_failure" if i % 4 == 1 else "on_job_success"
                args = {
                    "edges": [
                        {
                            "source": f"step-{middle - 1}",
                            "target": f"step-{middle}",
                            "condition_type": condition,
                        }
                    ]
                }
                outcome = run_tool(doc, "update_edges", args, context=ctx)
            assert outcome.ok, outcome.text
            doc.to_yaml()

        repeats = 200 if jobs <= 200 else 60
        mutate(0)  # warm-up
        samples = time_calls(mutate, repeats)

        def dump(_i: int, doc: WorkflowDocument = doc) -> None:
            doc.dump_full()

        dumps = time_calls(dump, 15 if jobs <= 200 else 5)
        assert doc.to_yaml() == doc.dump_full()
        result["mutation_p50_ms"][str(jobs)] = round(statistics.median(samples), 3)
        result["mutation_p95_ms"][str(jobs)] = round(percentile(samples, 0.95), 3)
        result["full_dump_p50_ms"][str(jobs)] = round(statistics.median(dumps), 3)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
