"""Running a plan scenario through the real plan graph on an in-memory project.

The plan graph, the workflow graph its builds use, the runner and the tools are
the service's own (``agents.plan``, ``agents.graph``, ``agents.runner``); only the
models, the workspace (:class:`~agents.plan.runtime.InMemoryWorkspace`) and the
checkpointers (in memory) are chosen here. Each plan turn is one graph run: its
reviews are answered in order from the scenario (resumed in the same run), and
the project (plan record and workflows) carries over to the next turn, which is
how a changed spec becomes a delta.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agents.events import (
    DeltaEvent,
    Event,
    MessageEvent,
    PlanProgressEvent,
    PlanProposedEvent,
    TurnCompletedEvent,
    WorkflowEvent,
)
from agents.graph import build_graph
from agents.models.base import ChatModel, ModelRequest, ModelResponse, ModelRole, TextSink
from agents.models.scripted import ScriptedModel
from agents.plan.graph import build_plan_graph
from agents.plan.runtime import InMemoryWorkspace, PlanRuntime, build_checkpointer
from agents.plan.state import PlanInput
from agents.runner import TurnRunner
from agents.runtime import AgentConfig
from evals.plan_scenario import PlanReview, PlanTurnSpec, ProposalStep
from evals.scenario import Scenario
from prompts import PromptTemplate, load_prompt
from tools.base import ToolContext
from tools.plan import PlanRecord

PROPOSE_PLAN = "propose_plan"


@dataclass
class PlanTurnOutcome:
    """What one plan turn did."""

    content: str
    proposals: list[PlanProposedEvent] = field(default_factory=list)
    """Every ``plan.proposed`` of the turn, in order (a revision after feedback adds one)."""
    answered: list[str] = field(default_factory=list)
    """The reviews given: ``approve``, ``feedback`` or ``reject``."""
    progress: list[PlanProgressEvent] = field(default_factory=list)
    workflow_ids: list[str] = field(default_factory=list)
    """The workflow of each ``workflow`` event (a version committed during the turn)."""
    reply: str = ""
    record: PlanRecord | None = None
    """The project's plan record after the turn."""
    created: list[str] = field(default_factory=list)
    """Workflows the turn added to the project."""
    yamls: dict[str, str] = field(default_factory=dict)
    """Each planned key's workflow (latest version) after the turn."""
    versions: dict[str, int] = field(default_factory=dict)
    """Each planned key's number of versions after the turn."""
    paused: bool = False
    """The turn still waits for a review the scenario did not give."""
    unused_reviews: int = 0
    """Reviews the scenario gave that the turn never asked for."""
    input_tokens: int = 0
    output_tokens: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def built(self) -> list[str]:
        return [p.workflow_key for p in self.progress if p.status == "built"]

    @property
    def failed(self) -> list[str]:
        return [p.workflow_key for p in self.progress if p.status == "failed"]

    @property
    def last_proposal(self) -> PlanProposedEvent | None:
        return self.proposals[-1] if self.proposals else None


@dataclass
class PlanRunOutcome:
    slug: str
    turns: list[PlanTurnOutcome] = field(default_factory=list)

    def project_yaml(self) -> str:
        """Every planned workflow after the last turn, in build order: one YAML stream."""
        last = next((t for t in reversed(self.turns) if t.record is not None), None)
        if last is None or last.record is None:
            return ""
        parts = [
            f"# workflow {key}\n{last.yamls[key]}"
            for key in last.record.plan.order
            if key in last.yamls
        ]
        return "---\n".join(parts)


class ScriptedPlanner:
    """``propose_plan`` requests answered from the scenario's ``proposals``; every other
    request (the builds) from the ordinary script."""

    name = "scripted"  # priced like every scripted model (nothing)

    def __init__(self, proposals: list[ProposalStep], builds: ChatModel) -> None:
        self.proposals = deque(proposals)
        self.builds = builds
        self._ids = itertools.count(1)

    async def create(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        if not any(t.get("name") == PROPOSE_PLAN for t in request.tools):
            return await self.builds.create(request, on_text=on_text)
        if not self.proposals:
            raise AssertionError("the scenario's proposals ran out (an unexpected plan request)")
        step = self.proposals.popleft()
        if step.text is not None:
            return ScriptedModel.text(step.text)
        use = {
            "type": "tool_use",
            "id": f"toolu_plan_{next(self._ids):04d}",
            "name": PROPOSE_PLAN,
            "input": step.plan,
        }
        return ModelResponse(content=[use], stop_reason="tool_use")


def scripted_plan_models(
    scenario: Scenario, builds: Mapping[ModelRole, ChatModel]
) -> dict[ModelRole, ChatModel]:
    assert scenario.plan is not None and scenario.plan.proposals is not None
    model = ScriptedPlanner(scenario.plan.proposals, builds["planner"])
    # The builds' router is asked nothing on the workflow page; code calls go to the script.
    return {"router": builds["router"], "planner": model, "job_code": builds["job_code"]}


@dataclass
class PlanExecutor:
    """Runs plan scenarios: one plan graph and one build graph, fresh project per run."""

    config: AgentConfig
    tools: Callable[[], ToolContext]
    prompt_loader: Callable[[str, str | None], PromptTemplate] | None = None
    runner: TurnRunner = field(
        default_factory=lambda: TurnRunner(build_plan_graph(InMemorySaver()))
    )
    workflow_graph: Any = field(default_factory=lambda: build_graph(build_checkpointer()))

    async def run(
        self, scenario: Scenario, models: Mapping[ModelRole, ChatModel], run_id: str
    ) -> PlanRunOutcome:
        spec = scenario.plan
        assert spec is not None
        workspace = InMemoryWorkspace(name=spec.project)
        outcome = PlanRunOutcome(slug=spec.slug)
        history: list[dict[str, str]] = []
        tools = self.tools()
        for index, turn in enumerate(spec.turns):
            runtime = PlanRuntime(
                models=models,
                workspace=workspace,
                workflow_graph=self.workflow_graph,
                clock=partial(datetime.now, UTC),
                config=self.config,
                tools=tools,
                prompt_loader=self.prompt_loader or load_prompt,
            )
            payload = self._input(f"{run_id}-p{index}", turn, workspace, spec.slug, history)
            done = PlanTurnOutcome(content=payload["user_text"])
            outcome.turns.append(done)
            before = set(workspace.workflows)
            try:
                await self._turn(payload, turn.reviews, runtime, done)
            except Exception as exc:  # a failed turn fails the scenario, not the run
                done.error = f"{type(exc).__name__}: {exc}"
                break
            finally:
                self._snapshot(workspace, before, done)
            history += [
                {"role": "user", "content": payload["user_text"]},
                {"role": "assistant", "content": done.reply},
            ]
        return outcome

    @staticmethod
    def _input(
        turn_id: str,
        turn: PlanTurnSpec,
        workspace: InMemoryWorkspace,
        slug: str,
        history: list[dict[str, str]],
    ) -> PlanInput:
        record = workspace.records[-1] if workspace.records else None
        return {
            "turn_id": turn_id,
            "project_id": f"eval-{slug}",
            "user_text": turn.text(),
            "mode": "plan",
            "read_only": turn.read_only,
            "history": list(history),
            "project": {
                "name": workspace.name,
                "slug": slug,
                "workflows": [{"id": i, "name": n} for i, n in workspace.names.items()],
            },
            "record": None if record is None else record.model_dump(mode="json"),
        }

    async def _turn(
        self,
        payload: PlanInput,
        reviews: list[PlanReview],
        runtime: PlanRuntime,
        out: PlanTurnOutcome,
    ) -> None:
        answers = deque(reviews)
        paused = await self._consume(self.runner.start(payload, runtime), out)
        while paused:
            if not answers:
                out.paused = True
                return
            review = answers.popleft()
            out.answered.append(review.kind)
            stream = self.runner.resume(
                payload["turn_id"], review.approve, runtime, feedback=review.feedback
            )
            paused = await self._consume(stream, out)
        out.unused_reviews = len(answers)

    @staticmethod
    async def _consume(stream: Any, out: PlanTurnOutcome) -> bool:
        paused = False
        async for event in stream:
            event_: Event = event
            if isinstance(event_, DeltaEvent):
                continue
            out.events.append(event_.wire())
            paused = isinstance(event_, PlanProposedEvent)
            if isinstance(event_, PlanProposedEvent):
                out.proposals.append(event_)
            elif isinstance(event_, PlanProgressEvent):
                out.progress.append(event_)
            elif isinstance(event_, WorkflowEvent) and event_.workflow_id:
                out.workflow_ids.append(event_.workflow_id)
            elif isinstance(event_, MessageEvent):
                out.reply = event_.text
            elif isinstance(event_, TurnCompletedEvent):
                out.input_tokens += event_.usage.input_tokens
                out.output_tokens += event_.usage.output_tokens
        return paused

    @staticmethod
    def _snapshot(workspace: InMemoryWorkspace, before: set[str], out: PlanTurnOutcome) -> None:
        out.created = [w for w in workspace.workflows if w not in before]
        out.record = workspace.records[-1] if workspace.records else None
        if out.record is None:
            return
        for key, planned in out.record.workflows.items():
            if planned.workflow_id and planned.workflow_id in workspace.workflows:
                out.yamls[key] = workspace.yaml(planned.workflow_id)
                out.versions[key] = len(workspace.workflows[planned.workflow_id].versions)
