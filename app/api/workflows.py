"""Workflows: create or import, read, replace, export, versions, revert.

Parsing, validating and emitting YAML is CPU work that takes seconds on a
3,000-step document: it runs in the thread pool (``app.offload.off_loop``), never on
the event loop, so other clients are not held up. The document a create, import,
PUT or revert parsed is handed to the turn service (``keep_parsed``), so the first
turn on that version does not parse and emit it again.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Path, Query, Response, status

from app.api import schemas
from app.deps import EditorDep, PrincipalDep, ServicesDep
from app.errors import NotFoundError
from app.offload import off_loop
from app.services import Services
from app.store import WorkflowRecord
from app.text import PathId
from app.writes import commit_content
from tools.credentials import ProjectCredentials
from tools.document import WorkflowDocument
from tools.document.importing import mint_missing_ids
from tools.document.limits import Counts, check_counts, check_text
from tools.document.names import sanitise_name
from tools.document.openfn import (
    Exported,
    Format,
    export_workflow,
    import_project,
    import_workflows,
)
from tools.document.structure import Change
from tools.edits.primitives import clean_name
from tools.errors import ToolInputError
from tools.registry import document_problems, run_tool

router = APIRouter(prefix="/v1/workflows", tags=["workflows"])


def _rename(services: Services, doc: WorkflowDocument, name: str) -> None:
    """Name the workflow through the tool, so REST names follow the tools' rules
    (sanitised: no control or bidi-override characters; not empty; bounded)."""
    renamed = run_tool(doc, "update_workflow", {"name": name}, context=services.tools)
    if not renamed.ok and renamed.error_code != "no_change":
        raise ToolInputError(renamed.text, code=renamed.error_code or "invalid_name")


def _clean_name(services: Services, doc: WorkflowDocument) -> None:
    """An imported document's own name follows the same rules."""
    if doc.name is not None and sanitise_name(doc.name) != doc.name:
        _rename(services, doc, doc.name)


def _accept_yaml(
    services: Services, text: str | None, name: str | None = None
) -> tuple[WorkflowDocument, list[str]]:
    """Parse (rejecting hostile or mistyped YAML; none: a new document), mint missing
    ids, clean the workflow's name or set ``name``, list problems, and emit the YAML
    (cached on the document). CPU work: call it through ``off_loop``."""
    if text is None:
        doc, problems = WorkflowDocument.new("Untitled workflow"), []
    else:
        limits = services.settings.document_limits
        check_text(text, "yaml", limits)  # before any per-job work
        doc = WorkflowDocument.from_yaml(text, max_bytes=limits.max_bytes)
        structure = doc.structure  # counted again: flow style is not counted from the text
        check_counts(Counts(len(structure.jobs), len(structure.edges)), limits)
        mint_missing_ids(doc, services.tools.new_id)
        _clean_name(services, doc)
        problems = [p.message for p in document_problems(doc, services.tools) if p.blocking]
    if name is not None:
        _rename(services, doc, name)
    doc.to_yaml()
    return doc, problems


def _parse(services: Services, text: str) -> WorkflowDocument:
    doc = WorkflowDocument.from_yaml(text, max_bytes=services.settings.max_yaml_bytes)
    doc.to_yaml()  # emitted here, off the loop; cached for the turn that adopts it
    return doc


def prepare_imported(services: Services, docs: list[WorkflowDocument]) -> list[list[str]]:
    """Clean imported documents' names, emit their YAML (cached on each document) and
    list each one's blocking problems. CPU work: call it through ``off_loop``."""
    for doc in docs:
        _clean_name(services, doc)
        doc.to_yaml()
    return [
        [p.message for p in document_problems(doc, services.tools) if p.blocking] for doc in docs
    ]


def _import(
    services: Services, body: schemas.ImportWorkflows
) -> tuple[str | None, list[WorkflowDocument], list[list[str]]]:
    """The file's project name (Lightning only), its documents and their problems."""
    check_text(body.content, body.format, services.settings.document_limits)
    if body.format == "lightning":
        project = import_project(
            body.content,
            new_id=services.tools.new_id,
            max_bytes=services.settings.max_yaml_bytes,
            allow_empty=False,
            files=body.files,
        )
        # The file's project name follows the same rules as POST /v1/projects's.
        name = None if project.name is None else clean_name(project.name, what="Project")
        docs = project.workflows
    else:
        name = None
        docs = import_workflows(
            body.format,
            body.content,
            new_id=services.tools.new_id,
            max_bytes=services.settings.max_yaml_bytes,
            files=body.files,
        )
    return name, docs, prepare_imported(services, docs)


def _export(
    services: Services, text: str, format: Format, credentials: ProjectCredentials
) -> Exported:
    doc = WorkflowDocument.from_yaml(text, max_bytes=services.settings.max_yaml_bytes)
    return export_workflow(
        doc, format, credentials=credentials.by_name(), catalogue=services.tools.catalogue
    )


def exported_response(exported: Exported) -> Response:
    """The file, with what OpenFn would trip over (steps that need a baseUrl, a credential
    Lightning cannot find) in ``X-Planwright-Warnings``, a JSON list of sentences."""
    headers = {"content-disposition": f'attachment; filename="{exported.filename}"'}
    if exported.warnings:
        headers["x-planwright-warnings"] = json.dumps(list(exported.warnings))
    return Response(exported.text, media_type=exported.media_type, headers=headers)


def _out(
    record: WorkflowRecord, problems: list[str] | None = None, *, unchanged: bool = False
) -> schemas.Workflow:
    return schemas.Workflow(
        id=record.id,
        project_id=record.project_id,
        name=record.name,
        version=record.version,
        yaml=record.yaml,
        problems=problems or [],
        unchanged=unchanged,
    )


async def _check_project(services: Services, project_id: str | None) -> None:
    """A 404 naming ``project_id`` before any parsing, when the project does not exist."""
    if project_id is not None:
        await services.store.require_project(project_id)


async def _workflow(services: Services, workflow_id: str) -> WorkflowRecord:
    record = await services.store.get_workflow(workflow_id)
    if record is None:
        raise NotFoundError(f"There is no workflow {workflow_id!r}.")
    return record


async def _replace(
    services: Services,
    workflow_id: str,
    doc: WorkflowDocument,
    *,
    yaml: str | None = None,
    expected_version: int | None,
    author: str,
    tool: str,
    summary: str,
) -> tuple[WorkflowRecord, bool]:
    """Commit the whole document (or ``yaml``, its exact text) as the next version and
    publish it; the workflow as of that version, with whether it was unchanged (the head
    already held that text: no version recorded). ``expected_version`` ``None``: on
    whatever the head is (:func:`app.writes.commit_content`)."""
    text = doc.to_yaml() if yaml is None else yaml
    services.turns.forget_parsed(workflow_id)
    version, unchanged = await commit_content(
        services.store,
        services.publisher,
        workflow_id,
        yaml=text,
        name=doc.name,
        expected_version=expected_version,
        author=author,
        tool=tool,
        summary=summary,
        changes=[Change("updated", "workflow", "*", tool)],
    )
    if not unchanged:
        services.turns.keep_parsed(workflow_id, doc, version)
    # The answer is this write's version, not a fresh read of the head: under concurrent
    # writes the head may already be someone else's version by now.
    # (A document without a name keeps the workflow's.)
    record = await _workflow(services, workflow_id)
    name = record.name if doc.name is None else doc.name
    return record.model_copy(update={"version": version, "yaml": text, "name": name}), unchanged


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_workflow(
    body: schemas.CreateWorkflow, services: ServicesDep, principal: EditorDep
) -> schemas.Workflow:
    """A new workflow (empty, or the given YAML), in project ``project_id`` or else in a
    new project of its own."""
    await _check_project(services, body.project_id)
    doc, problems = await off_loop(_accept_yaml, services, body.yaml, body.name)
    record = await services.store.create_workflow(
        name=doc.name or "Untitled workflow",
        yaml=doc.to_yaml(),
        project_id=body.project_id,
        author=principal.author,
    )
    services.turns.keep_parsed(record.id, doc, record.version)
    return _out(record, problems)


@router.post("/import", status_code=status.HTTP_201_CREATED)
async def import_workflows_route(
    body: schemas.ImportWorkflows, services: ServicesDep, principal: EditorDep
) -> schemas.ImportedWorkflows:
    """Import a file in any of the three formats; a Lightning project with several
    workflows makes several. All or nothing: one bad field fails the whole import
    (naming the field), and the workflows are created in one transaction, in project
    ``project_id`` or else in one new project (see also ``POST /v1/projects``)."""
    await _check_project(services, body.project_id)
    project_name, docs, problems = await off_loop(_import, services, body)
    records = await services.store.create_workflows(
        [(doc.name or "Untitled workflow", doc.to_yaml()) for doc in docs],
        project_id=body.project_id,
        project_name=project_name,
        author=principal.author,
        tool="import",
        summary=f"Imported ({body.format})",
    )
    for record, doc in zip(records, docs, strict=True):
        services.turns.keep_parsed(record.id, doc, record.version)
    return schemas.ImportedWorkflows(
        workflows=[_out(r, p) for r, p in zip(records, problems, strict=True)]
    )


@router.get("")
async def list_workflows(
    services: ServicesDep, principal: PrincipalDep
) -> list[schemas.WorkflowSummary]:
    return [
        schemas.WorkflowSummary(
            id=w.id,
            project_id=w.project_id,
            name=w.name,
            version=w.version,
            updated_at=w.updated_at,
        )
        for w in await services.store.list_workflows()
    ]


@router.get("/{workflow_id}")
async def get_workflow(
    workflow_id: PathId, services: ServicesDep, principal: PrincipalDep
) -> schemas.Workflow:
    return _out(await _workflow(services, workflow_id))


@router.get("/{workflow_id}/export")
async def export_workflow_route(
    workflow_id: PathId,
    services: ServicesDep,
    principal: PrincipalDep,
    format: Annotated[Format, Query(description="yaml, lightning (project.yaml) or cli")] = (
        "yaml"
    ),
) -> Response:
    """The workflow as Planwright YAML, a Lightning project.yaml or a CLI workflow.json."""
    record = await _workflow(services, workflow_id)
    if format == "yaml":  # the stored text itself, byte for byte
        return Response(
            record.yaml,
            media_type="application/yaml",
            headers={"content-disposition": f'attachment; filename="{record.id}.yaml"'},
        )
    credentials = await services.store.get_credentials(record.project_id)
    exported = await off_loop(_export, services, record.yaml, format, credentials)
    return exported_response(exported)


@router.put("/{workflow_id}")
async def put_workflow(
    workflow_id: PathId, body: schemas.PutWorkflow, services: ServicesDep, principal: EditorDep
) -> schemas.Workflow:
    """Replace the document. Text byte-identical to the current version's records
    nothing and answers ``unchanged: true`` (whatever ``expected_version``: the
    document already is what was asked for)."""
    await _workflow(services, workflow_id)
    doc, problems = await off_loop(_accept_yaml, services, body.yaml)
    record, unchanged = await _replace(
        services,
        workflow_id,
        doc,
        expected_version=body.expected_version,
        author=principal.author,
        tool="put",
        summary="Replaced the document",
    )
    return _out(record, problems, unchanged=unchanged)


@router.get("/{workflow_id}/versions")
async def list_versions(
    workflow_id: PathId, services: ServicesDep, principal: PrincipalDep
) -> list[schemas.Version]:
    await _workflow(services, workflow_id)
    return [
        schemas.Version.model_validate(v, from_attributes=True)
        for v in await services.store.list_versions(workflow_id)
    ]


@router.get("/{workflow_id}/versions/{version}")
async def get_version(
    workflow_id: PathId,
    version: Annotated[int, Path(ge=1, le=schemas.MAX_VERSION)],
    services: ServicesDep,
    principal: PrincipalDep,
) -> schemas.Version:
    found = await services.store.get_version(workflow_id, version)
    if found is None:
        raise NotFoundError(f"Workflow {workflow_id!r} has no version {version}.")
    return schemas.Version.model_validate(found, from_attributes=True)


@router.post("/{workflow_id}/revert")
async def revert(
    workflow_id: PathId, body: schemas.Revert, services: ServicesDep, principal: EditorDep
) -> schemas.Workflow:
    """Restore version ``version``'s text as a new version. With ``expected_version``, only
    if the workflow is still at it (409 otherwise, as for ``PUT``); without, on whatever
    the current version is, retried when a concurrent write gets in first. ``unchanged:
    true`` when the current version already holds that text."""
    await _workflow(services, workflow_id)
    target = await services.store.get_version(workflow_id, body.version)
    if target is None or target.yaml is None:
        raise NotFoundError(f"Workflow {workflow_id!r} has no version {body.version}.")
    doc = await off_loop(_parse, services, target.yaml)
    record, unchanged = await _replace(
        services,
        workflow_id,
        doc,
        yaml=target.yaml,  # byte for byte (a turn adopts ``doc`` only if it emits the same)
        expected_version=body.expected_version,
        author=principal.author,
        tool="revert",
        summary=f"Reverted to version {body.version}",
    )
    return _out(record, unchanged=unchanged)
