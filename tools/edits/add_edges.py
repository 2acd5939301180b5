from __future__ import annotations

from pydantic import Field

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.structure import Draft
from tools.edits.primitives import add_edge
from tools.edits.specs import EdgeSpec


class AddEdgesArgs(ToolArgs):
    """Connect steps (or the trigger to the first step). A trigger starts exactly one step,
    and edges never form a loop."""

    edges: list[EdgeSpec] = Field(min_length=1, description="The edges to add.")


def add_edges(draft: Draft, args: AddEdgesArgs, ctx: ToolContext) -> str:
    added = [add_edge(draft, spec, ctx) for spec in args.edges]
    return f"Added {len(added)} edge{'s' if len(added) != 1 else ''}: " + "; ".join(added) + "."


TOOL = ToolSpec(
    "add_edges",
    AddEdgesArgs,
    "structural",
    add_edges,
    spinner="Connecting {n} edge{s}…",
    count_field="edges",
    action="connect the steps",
)
