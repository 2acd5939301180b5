"""Exact lookups of steps, triggers and edges, with did-you-mean errors.

Nothing here guesses: an unknown reference is an error that lists what does
exist, so the model can correct itself in the same turn.
"""

from __future__ import annotations

from typing import Literal

from tools.document.names import did_you_mean
from tools.document.structure import Edge, Job, Structure
from tools.errors import ToolInputError

NodeKind = Literal["job", "trigger"]


def _listing(keys: list[str], noun: str) -> str:
    return f"{noun}: " + (", ".join(keys) if keys else "(none)")


def require_job(structure: Structure, key: str) -> Job:
    job = structure.jobs.get(key)
    if job is not None:
        return job
    by_name = [k for k, j in structure.jobs.items() if j.name.casefold() == key.casefold()]
    if by_name:
        hint = f" {key!r} is the display name of step {by_name[0]!r}; use the key."
    else:
        close = did_you_mean(key, structure.jobs)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise ToolInputError(
        f"There is no step with key {key!r}.{hint} {_listing(list(structure.jobs), 'Steps')}.",
        code="unknown_job",
    )


def resolve_node(structure: Structure, key: str) -> NodeKind:
    """Whether ``key`` names a step or a trigger (an edge source may be either)."""
    if key in structure.jobs:
        return "job"
    if key in structure.triggers:
        return "trigger"
    candidates = [*structure.jobs, *structure.triggers]
    close = did_you_mean(key, candidates)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise ToolInputError(
        f"There is no step or trigger with key {key!r}.{hint} "
        f"{_listing(list(structure.jobs), 'Steps')}; "
        f"{_listing(list(structure.triggers), 'triggers')}.",
        code="unknown_node",
    )


def require_edge(structure: Structure, source: str, target: str) -> Edge:
    edge = structure.find_edge(source, target)
    if edge is not None:
        return edge
    existing = [f"{e.source} -> {e.target_job}" for e in structure.edges.values()]
    raise ToolInputError(
        f"There is no edge from {source!r} to {target!r}. {_listing(existing, 'Edges')}.",
        code="unknown_edge",
    )
