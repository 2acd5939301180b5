from __future__ import annotations

from pydantic import Field

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.structure import Change, Draft, SetName
from tools.edits.primitives import clean_name
from tools.errors import ToolInputError


class UpdateWorkflowArgs(ToolArgs):
    """Rename the workflow."""

    name: str = Field(description="The new workflow name.")


def update_workflow(draft: Draft, args: UpdateWorkflowArgs, ctx: ToolContext) -> str:
    name = clean_name(args.name, what="Workflow")
    if name == draft.structure.name:
        raise ToolInputError(f"The workflow is already named {name!r}.", code="no_change")
    draft.apply(SetName(name))
    draft.note(Change("updated", "workflow", "name", name))
    return f"Renamed the workflow to {name!r}."


TOOL = ToolSpec(
    "update_workflow",
    UpdateWorkflowArgs,
    "structural",
    update_workflow,
    spinner="Renaming the workflow…",
    action="rename the workflow",
)
