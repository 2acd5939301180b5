from __future__ import annotations

from pydantic import Field

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.structure import Draft
from tools.edits.primitives import update_edge
from tools.edits.specs import EdgeFields


class EdgeUpdate(EdgeFields):
    source: str = Field(description="Current source key.")
    target: str = Field(description="Current target key.")
    new_source: str | None = Field(None, description="Move it to leave from this key.")
    new_target: str | None = Field(None, description="Move it to lead to this step.")


class UpdateEdgesArgs(ToolArgs):
    """Change edges: their condition, label, enabled flag, or where they start or end.
    Edges are named by their current source and target."""

    edges: list[EdgeUpdate] = Field(min_length=1, description="One entry per edge to change.")


def update_edges(draft: Draft, args: UpdateEdgesArgs, ctx: ToolContext) -> str:
    done = [
        update_edge(draft, item.source, item.target, item, item.new_source, item.new_target)
        for item in args.edges
    ]
    return "Updated edges: " + "; ".join(done) + "."


TOOL = ToolSpec(
    "update_edges",
    UpdateEdgesArgs,
    "structural",
    update_edges,
    spinner="Updating {n} edge{s}…",
    count_field="edges",
    action="change the edge",
    impact=True,
)
