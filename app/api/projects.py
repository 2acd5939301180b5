"""Projects (DESIGN §5a): create (empty or from a Lightning project.yaml), list, read,
export as one project.yaml, and its credentials (names, schemas and non-secret fields).

A project is a set of workflows; every workflow belongs to one (``POST
/v1/workflows`` without ``project_id`` makes a one-workflow project). Roles are
those of the workflow routes: anyone with a token reads and exports, editors and
admins create. Parsing and emitting YAML runs in the thread pool, as in
:mod:`app.api.workflows`; the store creates a project and all its workflows in
one transaction.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response, status

from app.api import schemas
from app.api.workflows import exported_response, prepare_imported
from app.deps import EditorDep, PrincipalDep, ServicesDep
from app.offload import off_loop
from app.services import Services
from app.store import ProjectRecord, WorkflowRecord
from app.text import PathId
from tools.credentials import ProjectCredentials
from tools.document import WorkflowDocument
from tools.document.limits import check_text
from tools.document.openfn import Exported, ImportedProject, export_project, import_project
from tools.edits.primitives import clean_name
from tools.plan import PlanRecord

router = APIRouter(prefix="/v1/projects", tags=["projects"])

UNTITLED = "Untitled project"


def _read(
    services: Services, body: schemas.CreateProject
) -> tuple[str, list[WorkflowDocument], list[list[str]]]:
    """The project's name and documents (each with its problems) from the request."""
    imported = ImportedProject(None, [])
    if body.yaml is not None:
        check_text(body.yaml, "lightning", services.settings.document_limits)
        imported = import_project(
            body.yaml, new_id=services.tools.new_id, max_bytes=services.settings.max_yaml_bytes
        )
    name = clean_name(body.name or imported.name or UNTITLED, what="Project")
    return name, imported.workflows, prepare_imported(services, imported.workflows)


def _export(
    services: Services, name: str, texts: list[str], credentials: ProjectCredentials
) -> Exported:
    limit = services.settings.max_yaml_bytes
    docs = [WorkflowDocument.from_yaml(text, max_bytes=limit) for text in texts]
    return export_project(
        docs, name=name, credentials=credentials.by_name(), catalogue=services.tools.catalogue
    )


def _workflow(record: WorkflowRecord, problems: list[str] | None = None) -> schemas.ProjectWorkflow:
    return schemas.ProjectWorkflow(
        id=record.id,
        name=record.name,
        version=record.version,
        position=record.position,
        updated_at=record.updated_at,
        problems=problems or [],
    )


def _project(
    project: ProjectRecord,
    workflows: list[schemas.ProjectWorkflow],
    plan: PlanRecord | None = None,
) -> schemas.Project:
    return schemas.Project(
        id=project.id,
        name=project.name,
        workflows=workflows,
        plan=plan,
        created_at=project.created_at,
        updated_at=project.updated_at,
    )


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_project(
    body: schemas.CreateProject, services: ServicesDep, principal: EditorDep
) -> schemas.Project:
    """An empty project, or one holding every workflow of a Lightning ``project.yaml``
    (all or nothing: one bad field fails the request, naming the field)."""
    name, docs, problems = await off_loop(_read, services, body)
    project, records = await services.store.create_project(
        name=name,
        documents=[(doc.name or "Untitled workflow", doc.to_yaml()) for doc in docs],
        author=principal.author,
        tool="import",
        summary="Imported with the project (lightning)",
    )
    for record, doc in zip(records, docs, strict=True):
        services.turns.keep_parsed(record.id, doc, record.version)
    return _project(project, [_workflow(r, p) for r, p in zip(records, problems, strict=True)])


@router.get("")
async def list_projects(
    services: ServicesDep, principal: PrincipalDep
) -> list[schemas.ProjectSummary]:
    """Newest first."""
    return [
        schemas.ProjectSummary.model_validate(p, from_attributes=True)
        for p in await services.store.list_projects()
    ]


@router.get("/{project_id}")
async def get_project(
    project_id: PathId, services: ServicesDep, principal: PrincipalDep
) -> schemas.Project:
    """The project, its workflows in order, and its plan (null until one is proposed)."""
    project = await services.store.require_project(project_id)
    workflows = await services.store.list_project_workflows(project.id)
    plan = await services.store.get_plan(project.id)
    return _project(project, [_workflow(w) for w in workflows], plan)


@router.get("/{project_id}/export")
async def export_project_route(
    project_id: PathId,
    services: ServicesDep,
    principal: PrincipalDep,
    format: Annotated[
        Literal["lightning"], Query(description="lightning: one project.yaml")
    ] = "lightning",
) -> Response:
    """Every workflow of the project in one Lightning ``project.yaml``, in project order,
    keyed as ``@openfn/project`` derives keys. Two workflows that would get the same key
    are refused (422 ``export_id_clash``, naming both)."""
    project = await services.store.require_project(project_id)
    workflows = await services.store.list_project_workflows(project.id)
    credentials = await services.store.get_credentials(project.id)
    exported = await off_loop(
        _export, services, project.name, [w.yaml for w in workflows], credentials
    )
    return exported_response(exported)


@router.get("/{project_id}/credentials")
async def get_credentials(
    project_id: PathId, services: ServicesDep, principal: PrincipalDep
) -> ProjectCredentials:
    """The project's credentials: names, schemas, owners and non-secret fields."""
    project = await services.store.require_project(project_id)
    return await services.store.get_credentials(project.id)


@router.put("/{project_id}/credentials")
async def put_credentials(
    project_id: PathId, body: ProjectCredentials, services: ServicesDep, principal: EditorDep
) -> ProjectCredentials:
    """Replace the project's credentials. A field that reads as a secret (password,
    token, apiKey, ...) or a URL with a user and password is 422: secrets stay in
    Lightning or the CLI's credential file."""
    project = await services.store.require_project(project_id)
    await services.store.save_credentials(project.id, body)
    return body
