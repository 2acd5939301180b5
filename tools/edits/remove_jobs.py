from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.refs import require_job
from tools.document.structure import Draft, Structure
from tools.edits.primitives import remove_job
from tools.jobcode import has_code


class RemoveJobsArgs(ToolArgs):
    """Remove steps and their edges; what they connected is not rewired. Ask the user
    first when a step holds code."""

    keys: list[str] = Field(min_length=1, description="Keys of the steps to remove.")


def remove_jobs(draft: Draft, args: RemoveJobsArgs, ctx: ToolContext) -> str:
    keys = list(dict.fromkeys(args.keys))
    names = {key: require_job(draft.structure, key).name for key in keys}
    with_code = 0
    cascaded: list[str] = []
    for key in keys:
        had_code, removed = remove_job(draft, key)
        with_code += had_code
        cascaded += removed
    text = "Removed " + ", ".join(f"{names[k]} ({k})" for k in keys) + "."
    if with_code:
        text += f" {with_code} of them held code, which is gone."
    if cascaded:
        text += " Also removed: " + "; ".join(cascaded) + "."
    orphans = [k for k in draft.structure.root_jobs() if not draft.structure.edges_into(k)]
    if orphans and draft.structure.triggers:
        reachable_from_trigger = {
            e.target_job for e in draft.structure.edges.values() if e.source_trigger
        }
        stranded = [k for k in orphans if k not in reachable_from_trigger]
        if stranded:
            text += " Now without an incoming edge: " + ", ".join(stranded) + "."
    return text


def removals_to_confirm(structure: Structure, inputs: Sequence[Mapping[str, Any]]) -> str | None:
    """The round's removals taken together, when they lose code or empty the workflow.

    Every call of the round counts: ``remove_jobs[a]`` and ``remove_jobs[b]`` remove as
    much as ``remove_jobs[a, b]``. Unknown keys are left to the call itself to refuse.
    """
    jobs = structure.jobs
    removed: dict[str, None] = {}  # ordered set of keys, in the order they were named
    for item in inputs:
        keys = item.get("keys")
        if isinstance(keys, list):
            removed.update(dict.fromkeys(k for k in keys if isinstance(k, str) and k in jobs))
    if not removed:
        return None
    with_code = [jobs[k].name for k in removed if has_code(jobs[k].body)]
    everything = set(removed) == set(jobs)
    if not with_code and not everything:
        return None
    parts: list[str] = []
    if everything:
        parts.append(f"remove all {len(removed)} steps")
    if with_code:
        names = ", ".join(repr(n) for n in with_code)
        holds = "holds" if len(with_code) == 1 else "hold"
        parts.append(f"{'including' if everything else 'remove'} {names}, which {holds} code")
    return ", ".join(parts)


TOOL = ToolSpec(
    "remove_jobs",
    RemoveJobsArgs,
    "structural",
    remove_jobs,
    spinner="Removing {n} step{s}…",
    count_field="keys",
    action="remove the step",
    confirm=removals_to_confirm,
    impact=True,
)
