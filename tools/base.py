"""What every tool shares: the call context, the result, the tool spec."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from tools.catalogue.adaptors import AdaptorCatalogue, load_catalogue
from tools.document.structure import Change, Draft

if TYPE_CHECKING:
    from tools.catalogue.docs_search import DocsIndex
    from tools.document import WorkflowDocument

ToolKind = Literal["mutate", "read", "subagent"]


class ToolArgs(BaseModel):
    """Base of every tool's input model: unknown fields are an error, never ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


ArgsT = TypeVar("ArgsT", bound=ToolArgs)


def _new_uuid() -> str:
    return str(uuid.uuid4())


@dataclass
class ToolContext:
    """Injected dependencies: the catalogue, the docs index and the id factory."""

    new_id: Callable[[], str] = _new_uuid
    catalogue_loader: Callable[[], AdaptorCatalogue] = load_catalogue
    docs_loader: Callable[[], DocsIndex] | None = None

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
    """What a tool call did, for the model (``text``) and for the code (the rest)."""

    ok: bool
    text: str
    error_code: str | None = None
    changes: list[Change] = field(default_factory=list)
    structure: dict[str, Any] | None = None
    data: dict[str, Any] | None = None

    @property
    def mutated(self) -> bool:
        return self.ok and bool(self.changes)

    @classmethod
    def failure(cls, code: str, message: str, *, mutating: bool) -> ToolResult:
        suffix = " The workflow was not changed." if mutating else ""
        return cls(ok=False, text=f"Error ({code}): {message}{suffix}", error_code=code)


@dataclass(frozen=True)
class ReadOutput:
    text: str
    data: dict[str, Any] | None = None


MutateHandler = Callable[[Draft, Any, ToolContext], str]
ReadHandler = Callable[["WorkflowDocument", Any, ToolContext], ReadOutput]


@dataclass(frozen=True)
class ToolSpec(Generic[ArgsT]):
    """One tool: its name, its input model (the schema), its kind and its handler.

    The description the model sees is the args model's docstring; the field
    descriptions are prompt text too.
    """

    name: str
    args: type[ArgsT]
    kind: ToolKind
    handler: Callable[..., Any]

    @property
    def description(self) -> str:
        return " ".join((self.args.__doc__ or "").split())

    @property
    def mutating(self) -> bool:
        return self.kind != "read"
