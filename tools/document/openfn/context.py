"""What an imported OpenFn file holds around a workflow, kept so an export writes it back.

A Lightning ``project.yaml`` (and an ``openfn deploy`` spec) carries more than one
workflow's jobs, triggers and edges: the project's ``name`` and ``description``, its
``credentials``, ``channels``, ``collections`` and whatever else a newer Lightning
adds, and fields on the workflow itself. Planwright edits none of it, and drops none
of it: the importer keeps it in the document's ``openfn`` field
(``{project: {...}, workflow: {...}}``, Planwright's documents keep unknown fields
byte for byte) and the ``lightning`` export writes it back around the workflow. A
trigger keyed other than by its type (``trigger-one``) keeps that key as its
``openfn_key``, and the exports name its step by it.

Job bodies: the deploy reads ``body`` as text, ``{content: text}`` or ``{path: file}``
(read from next to the spec). An import cannot read the user's disk, so a path is
looked up in the ``files`` the import was given (``path -> text``); a body naming a
file that was not given is refused, naming the field and the path.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from tools.document import WorkflowDocument
from tools.document.openfn.fields import CONTEXT_FIELD, bad, extras, text
from tools.document.openfn.ids import StepIds, step_ids

DEFAULT_ADAPTOR = "@openfn/language-common@latest"
"""The adaptor a job without one gets (Lightning's default for a new job)."""

PROJECT_FIELDS = {"workflows"}
"""Project fields read into documents; every other one is kept as the project's context."""


def project_context(project: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the project holds besides its workflows (name, description, sections)."""
    return extras(project, PROJECT_FIELDS)


def _normal(path: str) -> str:
    return posixpath.normpath(path.strip().removeprefix("./"))


def job_body(job: Mapping[str, Any], where: str, files: Mapping[str, str]) -> str | None:
    """A job's body as the deploy reads it: text, ``{content}``, or ``{path}`` from ``files``."""
    body = job.get("body")
    if not isinstance(body, Mapping):
        return text(job, "body", where)
    field = f"{where}.body"
    content = text(body, "content", field)
    if content is not None:
        return content
    path = text(body, "path", field)
    if path is None:
        bad(field, "must be the code, {content: <code>} or {path: <file>}.")
    return file_text(path, f"{field}.path", files)


def file_text(path: str, field: str, files: Mapping[str, str]) -> str:
    """The text of the file ``path`` names, from ``files``; refused (naming ``field``)
    when the import was not given it."""
    given = {_normal(k): v for k, v in files.items()}
    found = given.get(_normal(path))
    if found is None:
        bad(
            field,
            f"names the file {path.strip()!r}, which this import was not given: send its "
            "text in `files` under that path, or put the code itself.",
        )
    return found


def document_context(doc: WorkflowDocument) -> Mapping[str, Any]:
    """The ``openfn`` field of ``doc`` (empty when it has none or it is not a mapping)."""
    value = doc.unmodelled(CONTEXT_FIELD)
    return value if isinstance(value, Mapping) else {}


def kept_project(doc: WorkflowDocument) -> Mapping[str, Any]:
    value = document_context(doc).get("project")
    return value if isinstance(value, Mapping) else {}


def kept_workflow(doc: WorkflowDocument) -> Mapping[str, Any]:
    value = document_context(doc).get("workflow")
    return value if isinstance(value, Mapping) else {}


def trigger_keys(doc: WorkflowDocument) -> dict[str, str]:
    """Trigger key -> the key OpenFn knew it by, for triggers that kept one."""
    found: dict[str, str] = {}
    for key in doc.structure.triggers:
        value = doc.unmodelled("triggers", key, "openfn_key")
        if isinstance(value, str) and value.strip():
            found[key] = value
    return found


def document_step_ids(doc: WorkflowDocument) -> StepIds:
    """:func:`~tools.document.openfn.ids.step_ids` of ``doc``, its kept trigger keys honoured."""
    return step_ids(doc.structure, trigger_keys=trigger_keys(doc))
