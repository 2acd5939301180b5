from __future__ import annotations

from pydantic import Field

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.refs import require_job
from tools.document.structure import Draft
from tools.edits.primitives import remove_job


class RemoveJobsArgs(ToolArgs):
    """Remove steps and every edge attached to them. Steps they connected are not rewired:
    add edges afterwards if the flow should continue. Ask the user first when a step
    holds code."""

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


TOOL = ToolSpec("remove_jobs", RemoveJobsArgs, "mutate", remove_jobs)
