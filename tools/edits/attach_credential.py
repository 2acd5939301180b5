"""attach_credential: name the OpenFn credential steps run with, by step key or by adaptor.

"Use the payer-portal credential for the http steps": every step on language-http
gets ``credential: payer-portal``. A credential is a *name* (``tools.credentials``):
the secret stays in Lightning or the CLI's credential map. When the project's
credentials are known (``ToolContext.credentials``) the name must be one of them and
its schema must fit each step's adaptor (``raw`` fits any); otherwise the name is
taken as given. To remove a step's credential use update_jobs with ``credential: ""``.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.catalogue.names import split_adaptor
from tools.credentials import base_url_warnings
from tools.document.refs import require_job
from tools.document.structure import Change, Draft, UpdateEntry
from tools.edits.update_jobs import MAX_CREDENTIAL_LENGTH
from tools.errors import ToolInputError


class AttachCredentialArgs(ToolArgs):
    """Attach a project credential (by name, never a secret) to steps by exact key, or to
    every step on one adaptor. Give exactly one of job_keys and adaptor."""

    credential: str = Field(
        min_length=1,
        max_length=MAX_CREDENTIAL_LENGTH,
        pattern=r"^[^\r\n\t]+$",
        description="The credential's name, exactly as the project names it.",
    )
    job_keys: list[str] | None = Field(
        None, min_length=1, description="Keys of the steps that use it."
    )
    adaptor: str | None = Field(
        None,
        description="Every step on this adaptor uses it: a short name ('http') or a package.",
    )

    @model_validator(mode="after")
    def _one_target(self) -> AttachCredentialArgs:
        if (self.job_keys is None) == (self.adaptor is None):
            raise ValueError("give exactly one of job_keys and adaptor")
        return self


def _steps(draft: Draft, args: AttachCredentialArgs, ctx: ToolContext) -> list[str]:
    structure = draft.structure
    if args.job_keys is not None:
        return [require_job(structure, key).key for key in dict.fromkeys(args.job_keys)]
    adaptor = ctx.catalogue.get(args.adaptor or "")
    if adaptor is None:
        raise ToolInputError(f"Unknown adaptor {args.adaptor!r}.", code="unknown_adaptor")
    keys = [k for k, j in structure.jobs.items() if split_adaptor(j.adaptor)[0] == adaptor.name]
    if not keys:
        raise ToolInputError(
            f"No step uses {adaptor.short_name} ({adaptor.name}).", code="no_matching_steps"
        )
    return keys


def attach_credential(draft: Draft, args: AttachCredentialArgs, ctx: ToolContext) -> str:
    name = args.credential
    known = ctx.credentials
    credential = known.get(name) if known is not None else None
    if known is not None and credential is None:
        listed = ", ".join(repr(n) for n in known) or "none yet"
        raise ToolInputError(
            f"The project has no credential named {name!r} (its credentials: {listed}). "
            "Add it to the project's credentials first (name, schema, baseUrl; no secrets).",
            code="unknown_credential",
        )
    keys = _steps(draft, args, ctx)
    if credential is not None:
        misfits = [k for k in keys if not credential.fits(draft.structure.jobs[k].adaptor)]
        if misfits:
            raise ToolInputError(
                f"Credential {name!r} is a {credential.credential_schema} credential; "
                + ", ".join(repr(draft.structure.jobs[k].name) for k in misfits)
                + " use other adaptors.",
                code="credential_schema_mismatch",
            )
    changed = [k for k in keys if draft.structure.jobs[k].credential != name]
    if not changed:
        raise ToolInputError(
            f"Every step given already uses credential {name!r}.", code="no_change"
        )
    for key in changed:
        draft.apply(UpdateEntry("jobs", key, {"credential": name}))
        draft.note(Change("updated", "job", key, "credential"))
    names = ", ".join(repr(draft.structure.jobs[k].name) for k in changed)
    lines = [f"Attached credential {name!r} to {names}."]
    if credential is not None:
        warned = base_url_warnings(draft.structure, ctx.catalogue, known)
        lines += [f"Note: {warned[k]}" for k in changed if k in warned]
    return "\n".join(lines)


TOOL = ToolSpec(
    "attach_credential",
    AttachCredentialArgs,
    "structural",
    attach_credential,
    spinner="Attaching a credential…",
    action="attach the credential",
)
