from __future__ import annotations

from pydantic import Field

from tools.base import ReadOutput, ToolArgs, ToolContext, ToolSpec
from tools.document import WorkflowDocument
from tools.errors import ToolInputError


class SearchDocumentationArgs(ToolArgs):
    """Search adaptor functions and workflow concepts (triggers, edges, conditions, state,
    cron) to choose adaptors or answer how something works."""

    query: str = Field(min_length=1, description="What to look for, in plain words.")
    adaptor: str | None = Field(None, description="Limit the search to one adaptor.")
    num_results: int | None = Field(None, ge=1, le=20, description="How many results.")


def search_documentation(
    doc: WorkflowDocument, args: SearchDocumentationArgs, ctx: ToolContext
) -> ReadOutput:
    try:
        hits = ctx.docs.search(args.query, adaptor=args.adaptor, num_results=args.num_results or 5)
    except ValueError as exc:
        raise ToolInputError(str(exc), code="unknown_adaptor") from exc
    if not hits:
        return ReadOutput(f"No documentation matched {args.query!r}.", {"hits": []})
    text = "\n\n".join(f"{hit.title}\n{hit.text}" for hit in hits)
    return ReadOutput(
        text, {"hits": [{"title": h.title, "adaptor": h.adaptor, "kind": h.kind} for h in hits]}
    )


TOOL = ToolSpec(
    "search_documentation",
    SearchDocumentationArgs,
    "read",
    search_documentation,
    spinner="Searching the documentation…",
    action="search the documentation",
)
