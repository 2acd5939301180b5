"""Running turns through the real graph with scripted models."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from agents.graph import build_graph
from agents.models import AnthropicModel, ModelRequest, ModelResponse, ScriptedModel
from agents.models.base import ChatModel, ModelRole
from agents.runner import TurnRunner
from agents.runtime import AgentConfig, InMemoryCommitter, TurnRuntime
from agents.state import TurnInput
from tests.documents import REFERRAL_WITH_WEBHOOK
from tests.fakes.anthropic_server import FakeAnthropicServer
from tools.base import ToolContext
from tools.document import WorkflowDocument

BASE_YAML = REFERRAL_WITH_WEBHOOK

TURN_TIME = datetime(2026, 12, 4, 15, 30, tzinfo=UTC)
"""What time it is in the tests' turns (their runtime's ``clock``): a Friday afternoon."""

CLAUDE_MODELS: dict[ModelRole, str] = {
    "router": "claude-haiku-4-5",
    "planner": "claude-opus-4-5",
    "job_code": "claude-sonnet-4-6",
}


def claude(
    server: FakeAnthropicServer, *, timeout: float = 5.0, max_retries: int = 0
) -> AnthropicModel:
    """Claude through the real anthropic SDK, pointed at the fake Messages API."""
    return AnthropicModel(
        models=CLAUDE_MODELS,
        api_key="sk-test-key",
        base_url=server.base_url,
        timeout=timeout,
        max_retries=max_retries,
    )


def counting_ids() -> ToolContext:
    counter = itertools.count(100)
    return ToolContext(new_id=lambda: f"00000000-0000-4000-8000-{next(counter):012d}")


def runtime_for(model: ChatModel, **config: Any) -> TurnRuntime:
    return TurnRuntime(
        models={"router": model, "planner": model, "job_code": model},
        clock=lambda: TURN_TIME,
        config=AgentConfig(**config),
        tools=counting_ids(),
        committer=InMemoryCommitter(),
    )


def turn(text: str, yaml: str = BASE_YAML, **extra: Any) -> TurnInput:
    base: dict[str, Any] = {
        "turn_id": extra.pop("turn_id", "turn-1"),
        "user_text": text,
        "yaml": yaml,
        "version": extra.pop("version", 1),
        "page": "workflow",
        "job_key": None,
        "read_only": False,
        "errors": None,
        "history": [],
    }
    base.update(extra)
    return base  # type: ignore[return-value]


@dataclass
class Outcome:
    events: list[dict[str, Any]]
    state: dict[str, Any]
    runner: TurnRunner
    runtime: TurnRuntime = field(repr=False)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    @property
    def doc(self) -> WorkflowDocument:
        return WorkflowDocument.from_yaml(self.state["yaml"])

    @property
    def last(self) -> dict[str, Any]:
        return self.events[-1]


async def run(
    model: ChatModel,
    text: str,
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    runtime: TurnRuntime | None = None,
    config: dict[str, Any] | None = None,
    **extra: Any,
) -> Outcome:
    runner = TurnRunner(build_graph(checkpointer or InMemorySaver()))
    rt = runtime or runtime_for(model, **(config or {}))
    payload = turn(text, **extra)
    events = [e.wire() async for e in runner.start(payload, rt)]
    return Outcome(events, await runner.state(payload["turn_id"]), runner, rt)


async def resume(
    outcome: Outcome, approved: bool, turn_id: str = "turn-1", feedback: str | None = None
) -> Outcome:
    resumed = outcome.runner.resume(turn_id, approved, outcome.runtime, feedback=feedback)
    events = [e.wire() async for e in resumed]
    return Outcome(events, await outcome.runner.state(turn_id), outcome.runner, outcome.runtime)


class ByRole:
    """One model per role, as the service wires them."""

    name = "by-role"

    def __init__(self, **models: Any) -> None:
        self.models = models

    async def create(self, request: ModelRequest, *, on_text: Any = None) -> ModelResponse:
        response: ModelResponse = await self.models[request.role].create(request, on_text=on_text)
        return response


def by_role(**models: Any) -> Any:
    models.setdefault("router", ScriptedModel([]))
    return ByRole(**models)
