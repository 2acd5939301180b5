"""Runs scenarios through the real graph, concurrently and repeatedly, and grades them.

``run_eval(options)`` returns an :class:`EvalRun`; ``evals.report`` writes it
out. Models: ``offline`` (the offline model, on the scenarios it is
documented to handle), ``scripted`` (the scenarios' own scripts) and
``anthropic`` (Claude, needs ``ANTHROPIC_API_KEY``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

from langgraph.checkpoint.memory import InMemorySaver

from agents.graph import build_graph
from agents.models.base import ChatModel, ModelRole
from agents.runner import TurnRunner
from agents.runtime import AgentConfig
from evals.execute import (
    PromptLoader,
    RunOutcome,
    ScenarioExecutor,
    TurnHook,
    scripted_models,
)
from evals.graders import GradeResult, Judge, JudgeConfig, grade, run_passed
from evals.scenario import Scenario, load_scenarios
from prompts import list_prompts, load_prompt
from tools.base import ToolContext
from tools.catalogue.adaptors import AdaptorCatalogue, load_catalogue
from tools.catalogue.docs_search import DocsIndex


@dataclass
class EvalOptions:
    model: str = "offline"
    prompts: dict[str, str] = field(default_factory=dict)
    categories: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    concurrency: int = 4
    repeat: int = 1
    max_tool_calls: int = 20
    judge: bool = True
    runtime: bool = True


@dataclass
class ScenarioRun:
    outcome: RunOutcome
    grades: list[GradeResult]

    @property
    def passed(self) -> bool:
        return run_passed(self.grades)


@dataclass
class ScenarioResult:
    scenario: Scenario
    runs: list[ScenarioRun] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.runs) and all(r.passed for r in self.runs)


@dataclass
class EvalRun:
    model: str
    model_ids: dict[str, str]
    prompts: dict[str, dict[str, str]]
    options: EvalOptions
    results: list[ScenarioResult]
    started_at: str
    duration_ms: int

    @property
    def run_name(self) -> str:
        versions = ",".join(f"{role}={p['version']}" for role, p in sorted(self.prompts.items()))
        return f"{self.model} {versions}"

    @property
    def pass_rate(self) -> float:
        runs = [r for res in self.results for r in res.runs]
        return round(sum(r.passed for r in runs) / len(runs), 4) if runs else 0.0


def prompt_versions(
    chosen: Mapping[str, str], loader: PromptLoader = load_prompt
) -> dict[str, dict[str, str]]:
    """Every shipped role -> ``{version, hash}`` as this run uses it."""
    out = {}
    for role in list_prompts():
        template = loader(role, chosen.get(role))
        out[role] = {"version": template.version, "hash": template.hash}
    return out


def parse_prompt_args(values: list[str]) -> dict[str, str]:
    """``["planner=v2"]`` -> ``{"planner": "v2"}``; checks the version exists."""
    chosen: dict[str, str] = {}
    for value in values:
        role, sep, version = value.partition("=")
        if not sep or not role or not version:
            raise ValueError(f"--prompt takes ROLE=VERSION, not {value!r}")
        chosen[role.strip()] = load_prompt(role.strip(), version.strip()).version
    return chosen


class Progress:
    """A plain-text progress line per finished run (a bar on a terminal)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total, self.done, self.passed = total, 0, 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def update(self, scenario: Scenario, run: ScenarioRun) -> None:
        self.done += 1
        self.passed += run.passed
        width = 24
        filled = round(width * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (width - filled)
        mark = "PASS" if run.passed else "FAIL"
        line = (
            f"[{bar}] {self.done}/{self.total} {mark} {scenario.id} "
            f"({run.outcome.latency_ms} ms) pass {self.passed}/{self.done}"
        )
        if self.tty:
            self.stream.write("\r\033[K" + line + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def anthropic_models() -> tuple[Mapping[ModelRole, ChatModel], dict[str, str]]:
    from agents.models.factory import ModelConfig, build_models

    config = ModelConfig.from_env()
    if not config.uses_anthropic:
        raise RuntimeError(
            "--model anthropic needs ANTHROPIC_API_KEY (or PLANWRIGHT_PROVIDER=bedrock|vertex)"
        )
    ids: dict[str, str] = {role: model for role, model in config.model_ids.items()}
    return build_models(config), ids


def models_for_kind(
    kind: str,
) -> tuple[Callable[[Scenario], Mapping[ModelRole, ChatModel]], dict[str, str]]:
    if kind == "scripted":
        return scripted_models, {"all": "scripted"}
    if kind == "offline":
        from agents.models.factory import offline_models

        shared = offline_models()
        return (lambda _scenario: shared), {"all": "offline"}
    if kind == "anthropic":
        models, ids = anthropic_models()
        return (lambda _scenario: models), ids
    raise ValueError(f"unknown model {kind!r} (offline, scripted or anthropic)")


def _tool_context_factory() -> Callable[[], ToolContext]:
    catalogue: list[AdaptorCatalogue] = []
    docs: list[DocsIndex] = []

    def load_cat() -> AdaptorCatalogue:
        if not catalogue:
            catalogue.append(load_catalogue())
        return catalogue[0]

    def load_docs() -> DocsIndex:
        if not docs:
            docs.append(DocsIndex.build(load_cat()))
        return docs[0]

    return lambda: ToolContext(catalogue_loader=load_cat, docs_loader=load_docs)


async def run_eval(
    options: EvalOptions,
    *,
    scenarios: list[Scenario] | None = None,
    observe: TurnHook | None = None,
    judge: Judge | None = None,
    progress: Progress | None = None,
    models: tuple[Callable[[Scenario], Mapping[ModelRole, ChatModel]], dict[str, str]]
    | None = None,
    prompt_loader: PromptLoader | None = None,
) -> EvalRun:
    started, started_at = time.perf_counter(), datetime.now(UTC).isoformat(timespec="seconds")
    chosen = (
        scenarios
        if scenarios is not None
        else load_scenarios(categories=options.categories, ids=options.ids, model=options.model)
    )
    models_for, model_ids = models or models_for_kind(options.model)
    if judge is None and options.judge:
        judge = Judge(JudgeConfig.from_env())
    executor = ScenarioExecutor(
        runner=TurnRunner(build_graph(InMemorySaver())),
        models_for=models_for,
        config=AgentConfig(
            max_tool_calls=options.max_tool_calls, prompt_versions=dict(options.prompts)
        ),
        tools=_tool_context_factory(),
        observe=observe,
        prompt_loader=prompt_loader,
    )
    results = {s.id: ScenarioResult(s) for s in chosen}
    jobs = [(s, k) for s in chosen for k in range(max(options.repeat, 1))]
    bar = progress or Progress(len(jobs))
    gate = asyncio.Semaphore(max(options.concurrency, 1))

    async def one(scenario: Scenario, repeat: int) -> tuple[str, ScenarioRun]:
        async with gate:
            outcome = await executor.run(scenario, options.model, repeat)
            run = ScenarioRun(
                outcome, await grade(scenario, outcome, judge, runtime=options.runtime)
            )
        bar.update(scenario, run)
        return scenario.id, run

    for scenario_id, run in await asyncio.gather(*(one(s, k) for s, k in jobs)):
        results[scenario_id].runs.append(run)
    for result in results.values():
        result.runs.sort(key=lambda r: r.outcome.repeat)
    return EvalRun(
        model=options.model,
        model_ids=model_ids,
        prompts=prompt_versions(options.prompts, prompt_loader or load_prompt),
        options=options,
        results=list(results.values()),
        started_at=started_at,
        duration_ms=round((time.perf_counter() - started) * 1000),
    )


def summary(run: EvalRun) -> dict[str, Any]:
    by_category: dict[str, list[bool]] = {}
    for result in run.results:
        for r in result.runs:
            by_category.setdefault(result.scenario.category, []).append(r.passed)
    return {
        "pass_rate": run.pass_rate,
        "categories": {c: round(sum(v) / len(v), 4) for c, v in sorted(by_category.items())},
    }
