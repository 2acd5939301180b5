"""The model protocol every client implements, shaped like the Anthropic Messages API.

A request carries the system prompt, messages, tools and tool_choice exactly as
the Messages API takes them, plus a structured :class:`RequestContext` with the
facts the prompt was built from (the redacted structure, the page, the step).
Real models read the prompt and ignore the context; the offline model reads
only the context and the conversation, so it never has to parse prose that we
generated ourselves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from tools.errors import PlanwrightError

ModelRole = Literal["router", "planner", "job_code"]
TextSink = Callable[[str], Awaitable[None]]


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


@dataclass
class RequestContext:
    """Structured facts behind a request (what the prompt was rendered from).

    ``structure`` is the redacted structure (``tools.redaction.redact``): no ids,
    no bodies. ``job`` is set for code requests: ``{key, name, adaptor, body}``;
    ``adaptor_functions`` lists the step's adaptor functions as
    ``{name, params, description}``. ``project`` is set on plan turns (project
    sessions): ``{name, slug, workflows: [{id, name}], plan, revising}``, where
    ``plan`` is the plan being revised (``revising`` true: ``user_text`` is the
    user's feedback on it) or the plan the project was last built from.
    """

    user_text: str = ""
    structure: dict[str, Any] = field(default_factory=dict)
    page: Literal["workflow", "job"] = "workflow"
    job_key: str | None = None
    read_only: bool = False
    errors: str | None = None
    last_run: str | None = None
    """The session's last failed test run in words (step, error, input), for "fix it"."""
    job: dict[str, Any] | None = None
    adaptor_functions: list[dict[str, Any]] = field(default_factory=list)
    neighbours: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, str]] = field(default_factory=list)
    project: dict[str, Any] | None = None
    now: datetime | None = None
    """When the request is made: every request of a turn carries its runtime's clock
    (``TurnRuntime.clock``, ``Store.now`` in the service). The offline model counts a
    cron trigger's next runs from it; ``None`` (a request made outside a turn): the time
    is not known, so nothing is said that depends on it."""


@dataclass
class ModelRequest:
    role: ModelRole
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: dict[str, Any] | None = None
    max_tokens: int = 4096
    context: RequestContext = field(default_factory=RequestContext)
    prompt_name: str | None = None
    prompt_version: str | None = None
    prompt_hash: str | None = None
    history_messages: int = 0
    """How many of ``messages`` are earlier turns: the part the next turn sends again
    unchanged, so a client with a prompt cache marks the cache up to there."""


@dataclass
class ModelResponse:
    """Content blocks as plain dicts: ``{"type": "text", "text": ...}`` or
    ``{"type": "tool_use", "id": ..., "name": ..., "input": {...}}``."""

    content: list[dict[str, Any]]
    stop_reason: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    @property
    def text(self) -> str:
        return "".join(b["text"] for b in self.content if b.get("type") == "text")

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]


@runtime_checkable
class ChatModel(Protocol):
    """One call to a model. ``on_text`` receives answer text as it is produced."""

    name: str

    async def create(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse: ...


class ModelError(PlanwrightError):
    """The model could not produce a usable answer (after the client's own retries)."""

    code = "model_error"


class ModelTimeoutError(ModelError):
    code = "model_timeout"


class ModelUnavailableError(ModelError):
    """Rate limited or overloaded, and retries did not help."""

    code = "model_unavailable"


class MalformedModelOutputError(ModelError):
    """The model's output could not be parsed (e.g. tool input that is not an object)."""

    code = "model_malformed_output"
