from __future__ import annotations

from pydantic import Field

from tools.base import ReadOutput, ToolArgs, ToolContext, ToolSpec
from tools.document import WorkflowDocument
from tools.document.refs import require_job


class InspectJobCodeArgs(ToolArgs):
    """Read the code of one or more steps (the structure you are given has no code)."""

    job_keys: list[str] = Field(min_length=1, max_length=20, description="Keys of the steps.")


def inspect_job_code(
    doc: WorkflowDocument, args: InspectJobCodeArgs, ctx: ToolContext
) -> ReadOutput:
    jobs = [require_job(doc.structure, key) for key in dict.fromkeys(args.job_keys)]
    sections = [
        f"--- {job.key} ({job.name}, {job.adaptor}) ---\n{job.body or ''}".rstrip() for job in jobs
    ]
    return ReadOutput("\n\n".join(sections), {"bodies": {job.key: job.body for job in jobs}})


TOOL = ToolSpec(
    "inspect_job_code",
    InspectJobCodeArgs,
    "read",
    inspect_job_code,
    spinner="Reading code…",
    action="show the code",
)
