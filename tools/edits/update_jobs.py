from __future__ import annotations

from pydantic import Field

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.catalogue.names import resolve_adaptor
from tools.document.refs import require_job
from tools.document.structure import Change, Draft, UpdateEntry
from tools.edits.primitives import clean_name, rename_job_key
from tools.errors import ToolInputError

MAX_CREDENTIAL_LENGTH = 200


class JobUpdate(ToolArgs):
    key: str = Field(description="Key of the step to change.")
    new_key: str | None = Field(None, description="New key; its edges and cron cursors follow.")
    name: str | None = Field(None, description="New display name.")
    adaptor: str | None = Field(
        None,
        description="New adaptor; the same package without a version keeps its pin.",
    )
    credential: str | None = Field(
        None,
        max_length=MAX_CREDENTIAL_LENGTH,
        description="Credential name (never a secret); an empty string removes it.",
    )


class UpdateJobsArgs(ToolArgs):
    """Rename steps, change their keys, adaptors or credential names. Code is not changed here: use
    call_job_code_agent for that."""

    jobs: list[JobUpdate] = Field(min_length=1, description="One entry per step to change.")


def _credential_name(key: str, raw: str) -> str | None:
    """A credential name as stored: trimmed, one line; empty means none."""
    name = raw.strip()
    if not name:
        return None
    if any(ch in name for ch in "\r\n\t"):
        raise ToolInputError(
            f"Step {key!r}: a credential is named on one line (a name, never a secret).",
            code="invalid_credential",
        )
    return name


def update_jobs(draft: Draft, args: UpdateJobsArgs, ctx: ToolContext) -> str:
    done: list[str] = []
    for item in args.jobs:
        job = require_job(draft.structure, item.key)
        values: dict[str, str | None] = {}
        if item.name is not None:
            name = clean_name(item.name)
            if name != job.name:
                values["name"] = name
        if item.adaptor is not None:
            adaptor = resolve_adaptor(item.adaptor, ctx.catalogue, current=job.adaptor)
            if adaptor != job.adaptor:
                values["adaptor"] = adaptor
        if item.credential is not None:
            credential = _credential_name(item.key, item.credential)
            if credential != job.credential:
                values["credential"] = credential
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
            parts += [
                f"{field} -> {value!r}" if value is not None else f"{field} removed"
                for field, value in values.items()
            ]
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
