from __future__ import annotations

from pydantic import Field

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.catalogue.names import resolve_adaptor
from tools.document.refs import require_job
from tools.document.structure import Change, Draft, UpdateEntry
from tools.edits.primitives import clean_name, rename_job_key
from tools.errors import ToolInputError


class JobUpdate(ToolArgs):
    key: str = Field(description="Key of the step to change.")
    new_key: str | None = Field(
        None, description="New key; edges and cron cursors that point at the step follow it."
    )
    name: str | None = Field(None, description="New display name.")
    adaptor: str | None = Field(
        None,
        description="New adaptor. Naming the same package without a version keeps its pin.",
    )


class UpdateJobsArgs(ToolArgs):
    """Rename steps, change their keys or adaptors. Code is not changed here: use
    call_job_code_agent for that."""

    jobs: list[JobUpdate] = Field(min_length=1, description="One entry per step to change.")


def update_jobs(draft: Draft, args: UpdateJobsArgs, ctx: ToolContext) -> str:
    done: list[str] = []
    for item in args.jobs:
        job = require_job(draft.structure, item.key)
        values: dict[str, str] = {}
        if item.name is not None:
            name = clean_name(item.name)
            if name != job.name:
                values["name"] = name
        if item.adaptor is not None:
            adaptor = resolve_adaptor(item.adaptor, ctx.catalogue, current=job.adaptor)
            if adaptor != job.adaptor:
                values["adaptor"] = adaptor
        renaming = item.new_key is not None and item.new_key != item.key
        if not values and not renaming:
            raise ToolInputError(
                f"Nothing to change on step {item.key!r}: every field given already has that "
                "value.",
                code="no_change",
            )
        parts: list[str] = []
        if values:
            draft.apply(UpdateEntry("jobs", item.key, values))
            draft.note(Change("updated", "job", item.key, ", ".join(sorted(values))))
            parts += [f"{field} -> {value!r}" for field, value in values.items()]
        if renaming and item.new_key is not None:
            cascaded = rename_job_key(draft, item.key, item.new_key)
            parts.append(f"key -> {item.new_key!r}")
            if cascaded:
                parts.append("updated " + ", ".join(cascaded))
        done.append(f"{item.key}: " + "; ".join(parts))
    return "Updated " + " | ".join(done) + "."


TOOL = ToolSpec(
    "update_jobs",
    UpdateJobsArgs,
    "structural",
    update_jobs,
    spinner="Updating {n} step{s}…",
    count_field="jobs",
    action="change the step",
)
