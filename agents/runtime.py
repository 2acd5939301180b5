"""Run-scoped dependencies of a turn, handed to the graph as LangGraph context.

Nothing here is built at import: the service (or a test) constructs a
``TurnRuntime`` with its model clients, configuration, tool context and the
committer that persists each mutation before it is published.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from agents.models.base import ChatModel, ModelRole
from agents.models.deadline import Deadline, DeadlineModel
from agents.models.pause import PauseContinuingModel
from agents.tokens import TokenCounter, local_token_counter
from agents.usage import DEFAULT_PRICES, ModelPrice, RecordingModel, UsageLedger
from prompts import PromptTemplate, load_prompt
from tools.base import ToolContext, ToolResult
from tools.document import WorkflowDocument
from tools.document.structure import Change
from tools.document.yaml_io import DEFAULT_MAX_BYTES
from tools.errors import PlanwrightError
from tools.testrun import RunRequest, TestRun

if TYPE_CHECKING:
    from agents.events import RunProgressEvent

log = logging.getLogger(__name__)

_BARE_DESCRIPTION = re.compile(r"^\s*(?:OpenFn adaptor for\s+(.*?))?\.?\s*$", re.IGNORECASE)


def _says_only_its_name(name: str, description: str) -> bool:
    """Whether a catalogue description is empty or "OpenFn adaptor for <its name>." (any
    case, spacing or punctuation): it says nothing the name does not."""
    found = _BARE_DESCRIPTION.match(description)
    if found is None:
        return False
    said = found.group(1) or ""

    def letters(text: str) -> str:
        return re.sub(r"[^a-z0-9]", "", text.lower())

    return not said or letters(said) == letters(name)


class CommitError(PlanwrightError):
    """A mutation could not be persisted; nothing was published."""

    code = "commit_failed"


@dataclass(frozen=True)
class Commit:
    """One mutation to persist: the document after it, and what made it.

    Every committer takes this one value (a turn's, the in-memory one, the service's
    :class:`app.publishing.StoreCommitter`), so the fields are named once."""

    yaml: str
    """The whole document after the mutation."""
    name: str | None
    """The workflow's name after it (``None``: unchanged)."""
    base_version: int
    """The version it was made on; the commit is ``base_version + 1``."""
    tool: str
    """What made it: a tool's name, ``review``, ``plan``, ``put``, ``revert``."""
    changes: Sequence[Change]
    summary: str
    """The version's one-line description in the history."""
    turn_id: str | None = None
    """The turn that made it; ``None`` for a write that is not a turn's."""

    @classmethod
    def of_tool(
        cls,
        tool: str,
        result: ToolResult,
        *,
        yaml: str,
        name: str | None,
        base_version: int,
        turn_id: str,
    ) -> Commit:
        """The commit of one tool call's mutation: its changes, its headline as summary."""
        return cls(yaml, name, base_version, tool, result.changes, result.headline, turn_id)


class Committer(Protocol):
    """Persists a mutation and returns the new version number.

    Called after every successful mutation and before its ``workflow`` event
    is emitted and before the next tool runs. Must raise on failure.
    """

    async def commit(self, change: Commit) -> int: ...


async def commit_change(committer: Committer, change: Commit) -> int:
    """``committer.commit``, with any failure a :class:`CommitError` naming the tool."""
    try:
        return await committer.commit(change)
    except CommitError:
        raise
    except PlanwrightError as exc:  # e.g. a version conflict: its message is for people
        raise CommitError(
            f"Could not save the change made by {change.tool}: {exc.message}"
        ) from exc
    except Exception as exc:  # the store's own error names tables and values: logged only
        log.exception("saving the change made by %s failed", change.tool)
        raise CommitError(
            f"Could not save the change made by {change.tool}; the workflow is at its last "
            "saved version."
        ) from exc


class TurnTestRuns(Protocol):
    """Test-runs a turn's document for the ``test_run`` tool (DESIGN §5c), and keeps the run.

    The service's implementation runs it in OpenFn's runtime (``agents.testrun``) and
    stores it with the workflow; ``on_progress`` gets each step's start and end.
    ``version`` is the committed version ``yaml`` is at; with ``draft``, the version a
    review-mode draft was made from (the run then says ``draft: true``)."""

    async def run(
        self,
        *,
        yaml: str,
        version: int,
        request: RunRequest,
        turn_id: str,
        on_progress: Callable[[RunProgressEvent], Awaitable[None]] | None = None,
        draft: bool = False,
    ) -> TestRun: ...


@dataclass
class InMemoryCommitter:
    """Keeps versions in memory: for tests, evals and benchmarks."""

    versions: list[dict[str, Any]] = field(default_factory=list)

    async def commit(self, change: Commit) -> int:
        version = change.base_version + 1
        self.versions.append(
            {
                "version": version,
                "yaml": change.yaml,
                "tool": change.tool,
                "summary": change.summary,
                "turn": change.turn_id,
            }
        )
        return version


@dataclass(frozen=True)
class AgentConfig:
    """Limits and choices for one turn; the service builds it from its settings."""

    max_tool_calls: int = 20
    """Tool calls a turn may make in all; later calls get ``budget_spent``."""
    max_tokens: int = 4096
    """``max_tokens`` of every model request."""
    history_token_budget: int = 8000
    """Tokens of earlier turns sent with each request: the high-water mark of the block
    trimming (``agents.budget``); the newest are kept."""
    max_message_tokens: int = 6000
    """Longest user message a turn accepts, in tokens (``message_too_long`` beyond it)."""
    max_tokens_retry: int = 16384
    """``max_tokens`` of the one retry of a planner round whose tool call was cut off."""
    router_min_confidence: int = 3
    """Below this confidence (1-5) the router's choice of the code agent is ignored."""
    code_retries: int = 1
    """How often a code sub-agent may fix a reply whose edits failed or did not check."""
    max_yaml_bytes: int = DEFAULT_MAX_BYTES
    """The document size limit inside turns."""
    prompt_versions: Mapping[str, str] = field(default_factory=dict)
    """Prompt version per role; a role left out gets its newest local file."""
    prices: Mapping[str, ModelPrice] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    """USD per million tokens by model id, for the cost of each call."""
    turn_deadline_s: float | None = None
    """How long one run of a turn (its start or a resume, to its end or next pause) may
    wait on models; ``None``: no limit (:mod:`agents.models.deadline`)."""


class RecordsCalls:
    """``model`` and ``prompt`` for a run's context (a turn's, a plan turn's): every model
    call and every prompt used is recorded in its ``usage``."""

    models: Mapping[ModelRole, ChatModel]
    config: AgentConfig
    prompt_loader: Callable[[str, str | None], PromptTemplate]
    usage: UsageLedger
    deadline: Deadline | None

    def __post_init__(self) -> None:
        if self.deadline is None:  # the run starts now
            self.deadline = Deadline(self.config.turn_deadline_s)

    def check_deadline(self) -> None:
        """Raise :class:`~agents.models.deadline.TurnDeadlineError` once the deadline passed."""
        if self.deadline is not None:
            self.deadline.check()

    def model(self, role: ModelRole) -> ChatModel:
        """The role's model; each call through it ends by the run's deadline, is
        recorded in ``usage`` (a call the deadline stopped too) and, paused with
        ``pause_turn``, is continued (:mod:`agents.models.pause`)."""
        deadline = self.deadline or Deadline(self.config.turn_deadline_s)
        timed = DeadlineModel(self.models[role], deadline)
        # A reply paused with pause_turn is continued: each part its own recorded call.
        return PauseContinuingModel(RecordingModel(timed, self.usage, self.config.prices))

    def prompt(self, role: str) -> PromptTemplate:
        """The role's prompt template, noted in ``usage`` as used by this run."""
        template = self.prompt_loader(role, self.config.prompt_versions.get(role))
        self.usage.use_prompt(role, template.name, template.version, template.hash)
        return template


@dataclass
class TurnRuntime(RecordsCalls):
    """What a turn runs with (LangGraph context): never checkpointed, rebuilt on resume."""

    models: Mapping[ModelRole, ChatModel]
    """The model client for each role (router, planner, job_code)."""
    clock: Callable[[], datetime] = field(kw_only=True)
    """What time it is (timezone-aware): each model request carries it as
    ``RequestContext.now``. No default: the service passes its store's clock
    (``Store.now``), a test a fixed one."""
    config: AgentConfig = field(default_factory=AgentConfig)
    """Limits and prompt versions."""
    tools: ToolContext = field(default_factory=ToolContext)
    """The tools' catalogue, docs index and id factory."""
    committer: Committer = field(default_factory=InMemoryCommitter)
    """Persists (and publishes) each mutation before the graph emits it."""
    prompt_loader: Callable[[str, str | None], PromptTemplate] = load_prompt
    """Local prompt files by default; Langfuse prompt management plugs in here."""
    usage: UsageLedger = field(default_factory=UsageLedger)
    """Every model call of the turn and the prompts it used (a resumed turn's starts
    with the calls stored before the pause)."""
    test_runs: TurnTestRuns | None = None
    """Runs the workflow for ``test_run`` calls; ``None``: test runs are not available
    here (the call gets ``runs_unavailable``)."""
    deadline: Deadline | None = None
    """When this run must end (``None``: ``config.turn_deadline_s`` from now); a resumed
    turn is a new run with a new deadline."""
    tokens: TokenCounter = field(default_factory=local_token_counter)
    """Counts tokens for the budgets: the API's count with a key, a local BPE without."""
    _doc: WorkflowDocument | None = field(default=None, repr=False)
    """The parsed document, kept between nodes while it matches ``_doc_version``."""
    _doc_version: int | None = field(default=None, repr=False)
    """The committed version ``_doc`` is at."""

    @cached_property
    def adaptor_list(self) -> str:
        """The adaptors for the planner's system prompt: one line each with what it does;
        those whose description only repeats their name ("OpenFn adaptor for X.") are
        named together on one line (a third of the list's tokens, on every request)."""
        described: list[str] = []
        named: list[str] = []
        for adaptor in self.tools.catalogue.adaptors.values():
            if _says_only_its_name(adaptor.short_name, adaptor.description or ""):
                named.append(adaptor.short_name)
            else:
                described.append(f"- {adaptor.short_name}: {adaptor.description}")
        if named:
            described.append("- also, without a description here: " + ", ".join(named))
        return "\n".join(described)

    def document(self, yaml: str, version: int) -> WorkflowDocument:
        """The live document for ``version``: reused across nodes, parsed only when needed."""
        if self._doc is None or self._doc_version != version:
            self._doc = WorkflowDocument.from_yaml(yaml, max_bytes=self.config.max_yaml_bytes)
            self._doc_version = version
        return self._doc

    def adopt(self, doc: WorkflowDocument, version: int) -> None:
        self._doc, self._doc_version = doc, version

    def live_document(self) -> tuple[WorkflowDocument, int] | None:
        """The parsed document and the committed version it is at, if one is live."""
        if self._doc is None or self._doc_version is None:
            return None
        return self._doc, self._doc_version

    def forget_document(self) -> None:
        """Drop the live document (after a failed commit it holds uncommitted edits)."""
        self._doc, self._doc_version = None, None
