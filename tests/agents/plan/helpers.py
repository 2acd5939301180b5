"""Running plan turns through the real plan graph: a scripted planner for proposals,
the offline model for everything the builds ask."""

from __future__ import annotations

import itertools
from collections import deque
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agents.events import Event, PlanProposedEvent
from agents.graph import build_graph
from agents.models.base import ChatModel, ModelRequest, ModelResponse, ModelRole, TextSink
from agents.offline import OfflineModel
from agents.plan.graph import build_plan_graph
from agents.plan.runtime import InMemoryWorkspace, PlanRuntime, build_checkpointer
from agents.plan.state import PlanInput
from agents.runner import TurnRunner
from tests.agents.helpers import TURN_TIME, counting_ids
from tools.plan import PlannedTrigger, PlannedWorkflow, ProjectPlan


class ProposingModel:
    """Answers plan requests from a script (a plan's JSON, or text); every other request
    (the builds' router, planner and code calls) goes to the offline model."""

    name = "proposing"

    def __init__(self, *proposals: dict[str, Any] | str) -> None:
        self.proposals = deque(proposals)
        self.plan_requests: list[ModelRequest] = []
        self.build_requests: list[ModelRequest] = []
        self.offline = OfflineModel()
        self._ids = itertools.count(1)

    async def create(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        if not any(t.get("name") == "propose_plan" for t in request.tools):
            self.build_requests.append(request)
            return await self.offline.create(request, on_text=on_text)
        self.plan_requests.append(request)
        step = self.proposals.popleft()
        if isinstance(step, str):
            return ModelResponse(content=[{"type": "text", "text": step}], stop_reason="end_turn")
        use = {
            "type": "tool_use",
            "id": f"toolu_p{next(self._ids)}",
            "name": "propose_plan",
            "input": step,
        }
        return ModelResponse(content=[use], stop_reason="tool_use")


def workflow(
    key: str, name: str, steps: list[str], *, after: list[str] | None = None, **fields: Any
) -> PlannedWorkflow:
    return PlannedWorkflow(
        key=key,
        name=name,
        purpose=fields.pop("purpose", f"{name}."),
        trigger=fields.pop("trigger", PlannedTrigger(type="webhook")),
        depends_on=after or [],
        steps=steps,
        **fields,
    )


INTAKE_STEPS = ["Check the referral fields with common", "Post the referral to the EHR with http"]


def plan_of(*workflows: PlannedWorkflow, summary: str = "The plan.") -> dict[str, Any]:
    from tools.plan import leaf_first_order

    plan = ProjectPlan(
        summary=summary, workflows=list(workflows), order=leaf_first_order(list(workflows))
    )
    return plan.model_dump(mode="json")


class PlanHarness:
    """One plan graph with an in-memory checkpointer and project."""

    def __init__(self, model: ChatModel, *, name: str = "Referrals") -> None:
        self.model = model
        self.workspace = InMemoryWorkspace(name=name)
        self.runner = TurnRunner(build_plan_graph(InMemorySaver()))
        self.workflow_graph = build_graph(build_checkpointer())
        self._turns = itertools.count(1)

    def runtime(self) -> PlanRuntime:
        models: dict[ModelRole, ChatModel] = {
            "router": self.model,
            "planner": self.model,
            "job_code": self.model,
        }
        return PlanRuntime(
            models=models,
            workspace=self.workspace,
            workflow_graph=self.workflow_graph,
            clock=lambda: TURN_TIME,
            tools=counting_ids(),
        )

    def turn(self, text: str, **extra: Any) -> PlanInput:
        record = self.workspace.records[-1] if self.workspace.records else None
        turn: PlanInput = {
            "turn_id": f"turn-{next(self._turns)}",
            "project_id": "p1",
            "user_text": text,
            "mode": "plan",
            "read_only": False,
            "history": [],
            "project": {"name": self.workspace.name, "slug": "referrals", "workflows": []},
            "record": None if record is None else record.model_dump(mode="json"),
        }
        turn.update(extra)  # type: ignore[typeddict-item]
        return turn

    async def start(self, text: str, **extra: Any) -> tuple[str, list[Event]]:
        turn = self.turn(text, **extra)
        return turn["turn_id"], [e async for e in self.runner.start(turn, self.runtime())]

    async def answer(
        self, turn_id: str, approved: bool, feedback: str | None = None
    ) -> list[Event]:
        events = self.runner.resume(turn_id, approved, self.runtime(), feedback=feedback)
        return [e async for e in events]


def proposed(events: list[Event]) -> PlanProposedEvent:
    found = [e for e in events if isinstance(e, PlanProposedEvent)]
    assert len(found) == 1, events
    return found[0]


INTAKE = workflow("intake", "Referral intake", INTAKE_STEPS, outputs=["referral"])
"""A leaf: it hands the referral to COVERAGE."""
COVERAGE = workflow(
    "coverage",
    "Coverage check",
    ["Post the referral to the insurer with http"],
    after=["intake"],
    inputs=["referral"],
)
"""Built after INTAKE, on what it hands over."""
