from __future__ import annotations

from pydantic import Field

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.refs import require_edge
from tools.document.structure import Change, Draft, RemoveEntry


class EdgeRef(ToolArgs):
    source: str = Field(description="Source key of the edge.")
    target: str = Field(description="Target key of the edge.")


class RemoveEdgesArgs(ToolArgs):
    """Disconnect steps by removing edges, named by source and target."""

    edges: list[EdgeRef] = Field(min_length=1, description="The edges to remove.")


def remove_edges(draft: Draft, args: RemoveEdgesArgs, ctx: ToolContext) -> str:
    removed: list[str] = []
    for ref in args.edges:
        edge = require_edge(draft.structure, ref.source, ref.target)
        draft.apply(RemoveEntry("edges", edge.key))
        draft.note(Change("removed", "edge", edge.key))
        removed.append(f"{ref.source} -> {ref.target}")
    return "Removed edges: " + "; ".join(removed) + "."


TOOL = ToolSpec(
    "remove_edges",
    RemoveEdgesArgs,
    "structural",
    remove_edges,
    spinner="Removing {n} edge{s}…",
    count_field="edges",
    action="disconnect the steps",
    impact=True,
)
