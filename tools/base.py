"""What every tool shares: the call context, the result, the tool spec."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from tools.catalogue.adaptors import AdaptorCatalogue, load_catalogue
from tools.document.structure import Change, Draft, Structure
from tools.schema import input_schema

if TYPE_CHECKING:
    from tools.catalogue.docs_search import DocsIndex
    from tools.credentials import Credential
    from tools.document import WorkflowDocument

ToolKind = Literal["structural", "read", "fan_out", "code_edit", "route", "plan", "run"]


class ToolArgs(BaseModel):
    """Base of every tool's input model: unknown fields are an error, never ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


ArgsT = TypeVar("ArgsT", bound=BaseModel)


def _new_uuid() -> str:
    return str(uuid.uuid4())


@dataclass
class ToolContext:
    """Injected dependencies: the catalogue, the docs index and the id factory."""

    new_id: Callable[[], str] = _new_uuid
    catalogue_loader: Callable[[], AdaptorCatalogue] = load_catalogue
    docs_loader: Callable[[], DocsIndex] | None = None
    credentials: Mapping[str, Credential] | None = None
    """The project's credentials by name (``tools.credentials``); ``None`` when not known
    (evals, a document on its own): then a credential name is taken as given."""

    @cached_property
    def catalogue(self) -> AdaptorCatalogue:
        return self.catalogue_loader()

    @cached_property
    def docs(self) -> DocsIndex:
        if self.docs_loader is not None:
            return self.docs_loader()
        from tools.catalogue.docs_search import DocsIndex

        return DocsIndex.build(self.catalogue)


@dataclass
class ToolResult:
    """What a tool call did: data for the code, and ``text`` rendered from it for the model.

    ``message`` is what happened (or, on failure, what is wrong), ``error_code`` the
    stable code of a failure, ``changes`` the primitive changes, ``notes``
    non-blocking warnings about the result. Nothing reads ``text`` back apart.
    """

    ok: bool
    message: str
    error_code: str | None = None
    changes: list[Change] = field(default_factory=list)
    structure: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    mutating: bool = False
    """Whether the tool could have changed the workflow (failures then say it did not)."""

    @property
    def mutated(self) -> bool:
        return self.ok and bool(self.changes)

    @property
    def text(self) -> str:
        """The tool_result text the model sees."""
        if not self.ok:
            suffix = " The workflow was not changed." if self.mutating else ""
            return f"Error ({self.error_code}): {self.message}{suffix}"
        if self.notes:
            return f"{self.message}\nNote: " + " ".join(self.notes)
        return self.message

    @property
    def headline(self) -> str:
        """The first line of the message, at most 160 characters (status lines, summaries)."""
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return first if len(first) <= 160 else first[:157] + "…"

    @classmethod
    def failure(cls, code: str, message: str, *, mutating: bool) -> ToolResult:
        return cls(ok=False, message=message, error_code=code, mutating=mutating)


@dataclass(frozen=True)
class ReadOutput:
    text: str
    data: dict[str, Any] | None = None


MutateHandler = Callable[[Draft, Any, ToolContext], str]
ReadHandler = Callable[["WorkflowDocument", Any, ToolContext], ReadOutput]
ConfirmRule = Callable[[Structure, Sequence[Mapping[str, Any]]], str | None]
"""Given the structure and the inputs of every call of this tool in one round, what those
calls together would do that needs a yes first ("remove all 3 steps"), or None."""


@dataclass(frozen=True)
class ToolSpec(Generic[ArgsT]):
    """One tool and its policy: name, input model (the schema), kind, handler, status
    texts and confirmation rule. Everything that depends on which tool it is reads these
    fields; nothing compares tool names.

    The description the model sees is the args model's docstring; the field
    descriptions are prompt text too.
    """

    name: str
    args: type[ArgsT]
    kind: ToolKind
    """``structural`` edits the document; ``read`` only looks; ``fan_out`` hands the call to
    a sub-agent that runs in parallel after the round's structural calls; ``code_edit`` is
    the code sub-agent's own tool; ``route`` is the router's answer; ``plan`` proposes a
    project plan for review (plan turns only, never on a workflow's document); ``run``
    test-runs the workflow in OpenFn's runtime (the graph runs it; it changes nothing)."""
    handler: Callable[..., Any] | None = None
    spinner: str = "Working…"
    """Status while the call runs; ``{n}`` is the number of items and ``{s}`` a plural s."""
    count_field: str | None = None
    """The list field whose length is ``{n}`` in ``spinner``."""
    action: str = "do that"
    """What the call does, as a verb phrase ("add the step"), for summaries and errors."""
    confirm: ConfirmRule | None = None
    """Which calls need a yes first, and the question to ask (None: never asks)."""
    offers: Literal["plan"] | None = None
    """A successful call ends the turn's reply with an offer to send the message again in
    this mode (the ``message`` frame's ``offer``); it changes nothing itself."""
    impact: bool = False
    """Whether a call can change what runs: remove a step or trigger, leave steps no
    trigger reaches, remove or disable an edge, or change a trigger's type. A round with
    such a call is tried on a copy first and asks with its impact
    (``tools.document.impact``) when there is any; only these rounds pay for the copy."""

    @property
    def description(self) -> str:
        return " ".join((self.args.__doc__ or "").split())

    @property
    def mutating(self) -> bool:
        """Whether a read-only session refuses it: everything but reads, test runs and the
        router."""
        return self.kind not in ("read", "route", "run")

    @property
    def structural(self) -> bool:
        return self.kind == "structural"

    @property
    def fans_out(self) -> bool:
        return self.kind == "fan_out"

    @property
    def runs_workflow(self) -> bool:
        """The graph test-runs the workflow for this call (after the round's edits)."""
        return self.kind == "run"

    def spinner_text(self, args: Any) -> str:
        count = 1
        if self.count_field and isinstance(args, Mapping):
            items = args.get(self.count_field)
            if isinstance(items, list):
                count = len(items)
        return self.spinner.format(n=count, s="" if count == 1 else "s")

    def definition(self) -> dict[str, Any]:
        """The Anthropic tool definition, generated from the args model once (shared: do
        not mutate)."""
        return _definition(self)


@functools.cache
def _definition(spec: ToolSpec[Any]) -> dict[str, Any]:
    # Built per model request otherwise; the schema only changes with the code.
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": input_schema(spec.args),
    }
