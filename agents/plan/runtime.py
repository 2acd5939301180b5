"""Run-scoped dependencies of a plan turn (LangGraph context), never checkpointed.

The plan graph knows projects only through :class:`ProjectWorkspace`: the
service implements it over the store, the bus and the turn locks
(``app.plan_turns``); tests and evals use :class:`InMemoryWorkspace`. Each
planned workflow is built by an ordinary run of the workflow graph
(``workflow_graph``) with its own committer, so every mutation of a build is a
version of that workflow, persisted and published before its event.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from agents.models.base import ChatModel, ModelRole
from agents.models.deadline import Deadline
from agents.runtime import AgentConfig, Committer, InMemoryCommitter, RecordsCalls, TurnRuntime
from agents.tokens import TokenCounter, local_token_counter
from agents.usage import UsageLedger
from prompts import PromptTemplate, load_prompt
from tools.base import ToolContext
from tools.document import WorkflowDocument
from tools.plan import PlanRecord


@dataclass(frozen=True)
class OpenWorkflow:
    """A project workflow a build works on, at its committed version."""

    workflow_id: str
    yaml: str
    version: int
    committer: Committer
    """Persists (and publishes) each mutation of this workflow."""


class ProjectWorkspace(Protocol):
    """The project a plan turn works in."""

    async def save_plan(self, record: PlanRecord) -> None:
        """Store the project's plan record (before any event about it goes out)."""
        ...

    async def open_workflow(self, workflow_id: str | None, name: str) -> OpenWorkflow:
        """The workflow ``workflow_id`` (a plan rebuilding it), or a new, empty workflow
        named ``name`` added to the project."""
        ...

    def hold(self, workflow_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold the workflow's turn lock while a build changes it (a ``busy`` error when
        another turn runs on it)."""
        ...


@dataclass
class InMemoryWorkspace:
    """A project held in memory: for tests, evals and benchmarks."""

    name: str = "Project"
    records: list[PlanRecord] = field(default_factory=list)
    """Every plan record saved, in order (the last is the project's plan)."""
    workflows: dict[str, InMemoryCommitter] = field(default_factory=dict)
    """Each workflow's versions, by id."""
    names: dict[str, str] = field(default_factory=dict)
    new_id: Callable[[], str] = lambda: uuid.uuid4().hex

    async def save_plan(self, record: PlanRecord) -> None:
        self.records.append(record.model_copy(deep=True))

    async def open_workflow(self, workflow_id: str | None, name: str) -> OpenWorkflow:
        if workflow_id is not None and workflow_id in self.workflows:
            committer = self.workflows[workflow_id]
            last = committer.versions[-1]
            return OpenWorkflow(workflow_id, last["yaml"], last["version"], committer)
        workflow_id = self.new_id()
        yaml = WorkflowDocument.new(name=name).to_yaml()
        committer = InMemoryCommitter([{"version": 1, "yaml": yaml, "tool": "create"}])
        self.workflows[workflow_id] = committer
        self.names[workflow_id] = name
        return OpenWorkflow(workflow_id, yaml, 1, committer)

    @contextlib.asynccontextmanager
    async def hold(self, workflow_id: str) -> AsyncIterator[None]:
        yield

    def yaml(self, workflow_id: str) -> str:
        """The workflow's latest version."""
        return str(self.workflows[workflow_id].versions[-1]["yaml"])


@dataclass
class PlanRuntime(RecordsCalls):
    """What a plan turn runs with."""

    models: Mapping[ModelRole, ChatModel]
    """The model client per role: the planner proposes; builds use all of them."""
    workspace: ProjectWorkspace
    """The project: its plan record and its workflows."""
    workflow_graph: CompiledStateGraph[Any, Any, Any, Any]
    """The ordinary turn graph each planned workflow is built by (its own checkpointer:
    a build runs to its end within the plan turn, never paused)."""
    clock: Callable[[], datetime] = field(kw_only=True)
    """What time it is (timezone-aware), for its requests and its builds' runtimes
    (``TurnRuntime.clock``); the service passes its store's clock."""
    config: AgentConfig = field(default_factory=AgentConfig)
    tools: ToolContext = field(default_factory=ToolContext)
    prompt_loader: Callable[[str, str | None], PromptTemplate] = load_prompt
    usage: UsageLedger = field(default_factory=UsageLedger)
    """Every model call of the turn, the builds' too."""
    deadline: Deadline | None = None
    """When this run must end, its builds included (``None``: ``config.turn_deadline_s``
    from now)."""
    tokens: TokenCounter = field(default_factory=local_token_counter)
    """Counts tokens for the budgets (``agents.tokens``)."""

    def build_runtime(self, committer: Committer) -> TurnRuntime:
        """The runtime of one workflow's build: same models, limits and ledger."""
        return TurnRuntime(
            models=self.models,
            clock=self.clock,
            config=self.config,
            tools=self.tools,
            committer=committer,
            prompt_loader=self.prompt_loader,
            usage=self.usage,
            deadline=self.deadline,
            tokens=self.tokens,
        )


def build_checkpointer() -> InMemorySaver:
    """The builds' checkpointer: a build never pauses past its plan turn, so memory does."""
    return InMemorySaver()
