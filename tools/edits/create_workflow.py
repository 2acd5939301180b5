from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.structure import Change, Draft, SetName, Structure
from tools.edits.primitives import add_edge, add_job, clean_name, connect_trigger, set_trigger
from tools.edits.set_trigger import response_settings_to_confirm
from tools.edits.specs import EdgeSpec, JobSpec, TriggerSpec
from tools.errors import ToolInputError


class CreateWorkflowArgs(ToolArgs):
    """Build a workflow that has no steps yet in one call: name, steps, edges, trigger."""

    name: str = Field(description="Workflow name.")
    jobs: list[JobSpec] = Field(min_length=1, description="The steps, in order.")
    edges: list[EdgeSpec] = Field(default_factory=list, description="Edges (from the trigger too).")
    trigger: TriggerSpec | None = Field(
        None,
        description="Without an edge from it, it starts the first step.",
    )


def create_workflow(draft: Draft, args: CreateWorkflowArgs, ctx: ToolContext) -> str:
    if draft.structure.jobs:
        raise ToolInputError(
            f"The workflow already has {len(draft.structure.jobs)} steps; create_workflow only "
            "builds an empty workflow. Edit it with add_jobs/update_jobs/remove_jobs instead.",
            code="workflow_not_empty",
        )
    name = clean_name(args.name, what="Workflow")
    if name != draft.structure.name:
        draft.apply(SetName(name))
        draft.note(Change("updated", "workflow", "name", name))
    steps = [add_job(draft, spec, ctx) for spec in args.jobs]
    trigger_text = set_trigger(draft, args.trigger, ctx, connect=False) if args.trigger else ""
    edges = [add_edge(draft, spec, ctx) for spec in args.edges]
    for key in draft.structure.triggers:
        connected = connect_trigger(draft, key, ctx)
        if connected:
            trigger_text += f"; {connected}"
    lines = [f"Created workflow {name!r} with {len(steps)} steps: " + "; ".join(steps) + "."]
    if edges:
        lines.append("Edges: " + "; ".join(edges) + ".")
    if trigger_text:
        lines.append(f"Set {trigger_text}.")
    return "\n".join(lines)


def trigger_change_to_confirm(
    structure: Structure, inputs: Sequence[Mapping[str, Any]]
) -> str | None:
    """A new workflow's trigger replaces the existing one the way ``set_trigger`` does, so
    the same rule guards a webhook's response settings."""
    triggers = [item["trigger"] for item in inputs if isinstance(item.get("trigger"), Mapping)]
    return response_settings_to_confirm(structure, triggers) if triggers else None


TOOL = ToolSpec(
    "create_workflow",
    CreateWorkflowArgs,
    "structural",
    create_workflow,
    spinner="Building the workflow…",
    action="create the workflow",
    confirm=trigger_change_to_confirm,
    impact=True,
)
