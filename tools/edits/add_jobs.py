from __future__ import annotations

from pydantic import Field

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.structure import Draft
from tools.edits.primitives import add_job
from tools.edits.specs import JobSpec


class AddJobsArgs(ToolArgs):
    """Add one or more steps. New steps start with empty code and no edges: connect them
    with add_edges (or rewire with update_edges) in the same turn."""

    jobs: list[JobSpec] = Field(min_length=1, description="The steps to add.")


def add_jobs(draft: Draft, args: AddJobsArgs, ctx: ToolContext) -> str:
    added = [add_job(draft, spec, ctx) for spec in args.jobs]
    return f"Added {len(added)} step{'s' if len(added) != 1 else ''}: " + "; ".join(added) + "."


TOOL = ToolSpec(
    "add_jobs",
    AddJobsArgs,
    "structural",
    add_jobs,
    spinner="Adding {n} step{s}…",
    count_field="jobs",
    action="add the step",
)
