"""Stitching sub-agent code into a step, by exact key, after the code checks."""

from __future__ import annotations

from tools.base import ToolResult
from tools.catalogue.adaptors import AdaptorCatalogue, load_catalogue
from tools.catalogue.names import split_adaptor
from tools.credentials import base_url_warnings
from tools.document import WorkflowDocument
from tools.document.refs import require_job
from tools.document.structure import Change, Draft, UpdateEntry
from tools.errors import DocumentError, PlanwrightError
from tools.jobcode import check_job_code, format_problems, problems_error_code


def stitch_job_code(
    doc: WorkflowDocument,
    job_key: str,
    body: str,
    *,
    catalogue: AdaptorCatalogue | None = None,
) -> ToolResult:
    """Replace the body of step ``job_key`` with ``body`` if it parses and lints clean.

    The step is named exactly (no fuzzy matching); nothing else in the document
    is touched. A body with problems is refused and the document is unchanged;
    so is one calling an operation the step's adaptor (looked up in ``catalogue``,
    by default the packaged one) does not have (``unknown_operation``).
    """
    try:
        job = require_job(doc.structure, job_key)
    except PlanwrightError as exc:
        return ToolResult.failure(exc.code, exc.message, mutating=True)
    adaptor = (catalogue or load_catalogue()).get(job.adaptor or "")
    problems = check_job_code(body, adaptor, version=split_adaptor(job.adaptor or "")[1])
    if problems:
        return ToolResult.failure(
            problems_error_code(problems),
            f"The code for {job_key!r} has problems:\n{format_problems(problems)}\n".rstrip(),
            mutating=True,
        )
    if body == job.body:
        return ToolResult(ok=True, message=f"The code of {job_key!r} is unchanged.")
    draft = Draft(doc.structure)
    draft.apply(UpdateEntry("jobs", job_key, {"body": body}))
    draft.note(Change("updated", "job", job_key, "code"))
    try:
        doc.apply(draft.ops, draft.structure)
    except DocumentError as exc:  # e.g. the new code would push it past the size limit
        return ToolResult.failure(exc.code, exc.message, mutating=True)
    lines = len([line for line in body.splitlines() if line.strip()])
    warned = base_url_warnings(doc.structure, catalogue or load_catalogue())
    return ToolResult(
        notes=[warned[job_key]] if job_key in warned else [],
        ok=True,
        message=f"Wrote {lines} lines of code for {job.name} ({job_key}).",
        changes=draft.changes,
        mutating=True,
    )
