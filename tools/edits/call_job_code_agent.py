from __future__ import annotations

from pydantic import Field

from tools.base import ReadOutput, ToolArgs, ToolContext, ToolSpec
from tools.document import WorkflowDocument
from tools.document.refs import require_job


class CallJobCodeAgentArgs(ToolArgs):
    """Ask the code agent to write or change one step's code. Calls in the same round run
    in parallel, after that round's structure edits; create the step first."""

    job_key: str = Field(description="Exact key of the step whose code to write.")
    message: str = Field(
        min_length=1,
        description="What the code must do: inputs it receives, what it sends where, and "
        "what it must leave in state for the next step.",
    )


def call_job_code_agent(
    doc: WorkflowDocument, args: CallJobCodeAgentArgs, ctx: ToolContext
) -> ReadOutput:
    """Validate the request; the agent graph runs the sub-agent itself."""
    job = require_job(doc.structure, args.job_key)
    return ReadOutput(
        f"Code agent requested for step {job.key} ({job.name}).",
        {"job_key": job.key, "message": args.message},
    )


TOOL = ToolSpec(
    "call_job_code_agent",
    CallJobCodeAgentArgs,
    "fan_out",
    call_job_code_agent,
    spinner="Writing code…",
    action="write the code",
)
