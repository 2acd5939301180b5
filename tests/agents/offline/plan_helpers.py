"""What the offline model's plan-mode tests share: the example specs, one planner request
on a plan turn, a project context, and the frames of a kind among a turn's events."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.events import Event
from agents.models.base import ModelRequest, ModelResponse, RequestContext
from agents.offline import OfflineModel
from agents.offline.spec import read_spec
from tools.plan import ProjectPlan
from tools.plan.tool import PROPOSE_PLAN

SPECS = Path(__file__).parent / "specs"
PROPOSE_PLAN_TOOL: dict[str, Any] = PROPOSE_PLAN.definition()


def example(name: str) -> ProjectPlan:
    plan = read_spec((SPECS / name).read_text(), "project")
    assert isinstance(plan, ProjectPlan)
    return plan


def ask(
    text: str,
    *,
    project: dict[str, Any] | None,
    tools: list[dict[str, Any]] | None = None,
    messages: list[dict[str, Any]] | None = None,
) -> ModelResponse:
    request = ModelRequest(
        role="planner",
        system="",
        messages=messages or [{"role": "user", "content": text}],
        tools=[PROPOSE_PLAN_TOOL] if tools is None else tools,
        context=RequestContext(user_text=text, project=project),
    )
    return asyncio.run(OfflineModel().create(request))


def project(plan: ProjectPlan | None = None, revising: bool = False) -> dict[str, Any]:
    return {
        "name": "Referrals",
        "slug": "referrals",
        "workflows": [],
        "plan": plan.model_dump(mode="json") if plan else None,
        "revising": revising,
    }


def wired(events: Sequence[Event], kind: str) -> list[dict[str, Any]]:
    """The wire form of every event of type ``kind``."""
    return [w for e in events if (w := e.wire())["type"] == kind]
