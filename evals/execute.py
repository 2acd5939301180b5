"""Running one scenario through the real agent graph and recording what happened.

The graph, the runner and the tools are the service's own (``agents.graph``,
``agents.runner``); only the models, the committer (in memory) and the
checkpointer (in memory) are chosen here. Each user turn is one graph run;
a ``confirm.required`` pause is answered with the turn's ``approve`` (no answer
given: declined, and noted) and resumed in the same run.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property, partial
from typing import Any, Protocol

from agents.events import ConfirmEvent, DeltaEvent, Event, MessageEvent, TurnCompletedEvent
from agents.models.base import ChatModel, ModelResponse, ModelRole, Usage
from agents.models.scripted import ScriptedModel
from agents.runner import TurnRunner
from agents.runtime import AgentConfig, InMemoryCommitter, TurnRuntime
from agents.state import TurnInput
from evals.plan_execute import PlanExecutor, PlanRunOutcome, scripted_plan_models
from evals.scenario import Scenario, ScriptStepSpec
from prompts import PromptTemplate, load_prompt
from tools.base import ToolContext
from tools.document import WorkflowDocument

PromptLoader = Callable[[str, "str | None"], PromptTemplate]


@dataclass
class LoaderRuntime(TurnRuntime):
    """A runtime whose prompts come from ``loader`` (e.g. Langfuse by label)."""

    loader: PromptLoader = load_prompt

    def prompt(self, role: str) -> PromptTemplate:
        return self.loader(role, self.config.prompt_versions.get(role))


class Observer(Protocol):
    """Sees one turn: may wrap its runtime (models), gets every event, then ``close``."""

    def runtime(self, runtime: TurnRuntime) -> TurnRuntime: ...

    def event(self, event: Event) -> None: ...

    def close(self, error: BaseException | None = None) -> None: ...


# Builds the observer of one turn (tracing: ``agents.tracing.Tracer.turn``).
TurnHook = Callable[[TurnInput, TurnRuntime], Observer]


class TurnObserver:
    """The observer that does nothing."""

    def runtime(self, runtime: TurnRuntime) -> TurnRuntime:
        return runtime

    def event(self, event: Event) -> None:
        return None

    def close(self, error: BaseException | None = None) -> None:
        return None


@dataclass
class TurnOutcome:
    content: str
    before_yaml: str
    after_yaml: str
    reply: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    """Every event but message deltas, in its wire form."""
    confirmations: list[str] = field(default_factory=list)
    approved: bool | None = None
    tool_rounds: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    duration_ms: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def mutations(self) -> int:
        return sum(1 for e in self.events if e.get("type") == "workflow")


@dataclass
class RunOutcome:
    scenario_id: str
    model: str
    before_yaml: str
    after_yaml: str
    turns: list[TurnOutcome]
    latency_ms: int
    error: str | None = None
    repeat: int = 0
    plan: PlanRunOutcome | None = None
    """A plan scenario's turns on its project (``before_yaml`` is empty and ``after_yaml``
    every planned workflow, in build order)."""

    @property
    def reply(self) -> str:
        return self.turns[-1].reply if self.turns else ""

    @property
    def last(self) -> TurnOutcome:
        return self.turns[-1]

    @property
    def tool_rounds(self) -> int:
        return sum(t.tool_rounds for t in self.turns)

    @property
    def tokens(self) -> int:
        return sum(t.input_tokens + t.output_tokens for t in self.turns)

    @property
    def mutations(self) -> int:
        return sum(t.mutations for t in self.turns)

    @property
    def confirmations(self) -> list[str]:
        return [q for t in self.turns for q in t.confirmations]

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return [c for t in self.turns for c in t.tool_calls]

    @cached_property
    def before_doc(self) -> WorkflowDocument:
        return WorkflowDocument.from_yaml(self.before_yaml)

    @cached_property
    def after_doc(self) -> WorkflowDocument:
        return WorkflowDocument.from_yaml(self.after_yaml)


def scripted_response(step: ScriptStepSpec) -> ModelResponse:
    usage = Usage(input_tokens=step.input_tokens, output_tokens=step.output_tokens)
    if step.tool_calls:
        calls = [(c.name, c.input) for c in step.tool_calls]
        return ScriptedModel.tool_calls(*calls, text=step.text, usage=usage)
    return ScriptedModel.text(step.text or "", usage=usage)


def scripted_models(scenario: Scenario) -> dict[ModelRole, ChatModel]:
    script = scenario.script or {}
    model = ScriptedModel(
        {role: [scripted_response(s) for s in steps] for role, steps in script.items()}
    )
    models: dict[ModelRole, ChatModel] = {"router": model, "planner": model, "job_code": model}
    return scripted_plan_models(scenario, models) if scenario.plan is not None else models


def _tool_uses(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    calls = []
    for message in messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_use":
                calls.append({"name": block.get("name"), "input": block.get("input")})
    return calls


@dataclass
class ScenarioExecutor:
    """Runs scenarios on one graph runner with fresh models/runtime per run."""

    runner: TurnRunner
    models_for: Callable[[Scenario], Mapping[ModelRole, ChatModel]]
    config: AgentConfig
    tools: Callable[[], ToolContext]
    observe: TurnHook | None = None
    prompt_loader: PromptLoader | None = None
    _plans: PlanExecutor | None = None

    async def run(self, scenario: Scenario, model_name: str, repeat: int = 0) -> RunOutcome:
        if scenario.plan is not None:
            return await self._run_plan(scenario, model_name, repeat)
        started = time.perf_counter()
        start_yaml = scenario.start_yaml()
        yaml, version = start_yaml, 1
        history = list(scenario.history)
        models = self.models_for(scenario)
        turns: list[TurnOutcome] = []
        error: str | None = None
        for index, spec in enumerate(scenario.turns):
            turn_id = f"{scenario.id}-r{repeat}-t{index}-{next(_SEQ)}"
            payload: TurnInput = {
                "turn_id": turn_id,
                "workflow_id": f"eval-{scenario.id}",
                "user_text": spec.content,
                "page": spec.page,
                "job_key": spec.job_key,
                "read_only": spec.read_only,
                "errors": spec.errors,
                "history": history,
                "yaml": yaml,
                "version": version,
            }
            runtime = LoaderRuntime(
                models=models,
                clock=partial(datetime.now, UTC),
                config=self.config,
                tools=self.tools(),
                committer=InMemoryCommitter(),
                loader=self.prompt_loader or load_prompt,
            )
            outcome = TurnOutcome(content=spec.content, before_yaml=yaml, after_yaml=yaml)
            turns.append(outcome)
            try:
                await self._turn(payload, runtime, spec.approve, outcome)
            except Exception as exc:  # a failed turn fails the scenario, not the run
                outcome.error = error = f"{type(exc).__name__}: {exc}"
                break
            state = await self.runner.state(turn_id)
            yaml, version = state.get("yaml", yaml), state.get("version", version)
            history = list(state.get("history") or history)
            outcome.after_yaml = yaml
            outcome.tool_calls = _tool_uses(state.get("messages") or [])
        return RunOutcome(
            scenario_id=scenario.id,
            model=model_name,
            before_yaml=start_yaml,
            after_yaml=yaml,
            turns=turns,
            latency_ms=round((time.perf_counter() - started) * 1000),
            error=error,
            repeat=repeat,
        )

    async def _run_plan(self, scenario: Scenario, model_name: str, repeat: int) -> RunOutcome:
        """A plan scenario (``evals.plan_execute``); its turns are also listed as ordinary
        turn outcomes (text, reply, events, tokens) for the report and the judge."""
        if self._plans is None:
            self._plans = PlanExecutor(self.config, self.tools, self.prompt_loader)
        started = time.perf_counter()
        run_id = f"{scenario.id}-r{repeat}-{next(_SEQ)}"
        plan = await self._plans.run(scenario, self.models_for(scenario), run_id)
        final = plan.project_yaml()
        turns = [
            TurnOutcome(
                content=t.content,
                before_yaml="",
                after_yaml=final,
                reply=t.reply,
                events=t.events,
                confirmations=[p.question for p in t.proposals],
                approved=None if t.paused else True,
                input_tokens=t.input_tokens,
                output_tokens=t.output_tokens,
                error=t.error,
            )
            for t in plan.turns
        ]
        error = next((t.error for t in plan.turns if t.error), None)
        return RunOutcome(
            scenario_id=scenario.id,
            model=model_name,
            before_yaml="",
            after_yaml=final,
            turns=turns,
            latency_ms=round((time.perf_counter() - started) * 1000),
            error=error,
            repeat=repeat,
            plan=plan,
        )

    async def _turn(
        self, payload: TurnInput, runtime: TurnRuntime, approve: bool | None, out: TurnOutcome
    ) -> None:
        observer: Observer = self.observe(payload, runtime) if self.observe else TurnObserver()
        runtime = observer.runtime(runtime)
        try:
            stream = self.runner.start(payload, runtime)
            paused = await self._consume(stream, observer, out)
            while paused is not None:
                # No answer given: resumed as declined, and recorded as unanswered (None),
                # so the ``completed`` grader names the pause instead of "nothing changed".
                out.approved = approve
                stream = self.runner.resume(payload["turn_id"], bool(approve), runtime)
                paused = await self._consume(stream, observer, out)
        except BaseException as exc:
            observer.close(exc)
            raise
        observer.close(None)

    async def _consume(self, stream: Any, observer: Observer, out: TurnOutcome) -> str | None:
        paused: str | None = None
        async for event in stream:
            observer.event(event)
            if isinstance(event, DeltaEvent):
                continue
            out.events.append(event.wire())  # the transcript, as the wire carries it
            if isinstance(event, MessageEvent):
                out.reply = event.text
            elif isinstance(event, ConfirmEvent):
                out.confirmations.append(event.question)
                paused = event.request_id
            elif isinstance(event, TurnCompletedEvent):
                out.tool_rounds += event.tool_rounds
                out.input_tokens += event.usage.input_tokens
                out.output_tokens += event.usage.output_tokens
                out.duration_ms += event.duration_ms
        return paused


_SEQ = itertools.count(1)
