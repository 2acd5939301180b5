"""Lightning's ``project.yaml``, written the way ``@openfn/project`` (0.20.2) reads it.

The wrapper is ``{name, credentials: {}, workflows: {<key>: workflow}}``; each
workflow is ``{name, jobs, triggers, edges}`` keyed by the ids the package
derives (:mod:`tools.document.openfn.ids`): workflows and jobs by
``slugify(name)``, triggers by type, edges ``"<source>-><target>"``. Reading
this file, the package gives every step the id it is keyed by, so writing it
back (its ``serialize.spec``) gives the same keys: a pull/deploy cycle neither
renames nor deletes-and-recreates a step, and renaming a Planwright key
(``update_jobs`` ``new_key``) changes nothing in the file.

Like Lightning's own export, the file carries no ids: job, trigger and edge
UUIDs live in Lightning's state, never in ``project.yaml`` (the package drops
them on reading anyway). A cron cursor is therefore named by its job's key
(``cron_cursor_job``). Jobs carry ``name``, ``adaptor``, ``credential`` (a
name, only when set) and ``body`` (never blank); edges carry ``condition_type``,
``condition_expression`` and ``condition_label`` when set, and always
``enabled`` (the package reads a missing one as disabled). ``credentials:``
is always written (``{}`` without any): it is how the package recognises a
Lightning project.yaml before any edge exists.

Credentials are written as ``@openfn/project`` writes them (its ``to_app_state``):
keyed ``"<owner>|<name>"``, each ``{name, owner}`` (no schema, no body: Lightning
holds those), and a job's ``credential`` is that key, which the package reads back
as the step's ``configuration``. Only the project's credentials that have an owner
are listed (Lightning finds a credential by owner and name); a step naming any
other credential keeps its bare name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import LiteralScalarString

from tools.document import WorkflowDocument
from tools.document.names import edge_key
from tools.document.openfn.context import document_step_ids, kept_project, kept_workflow
from tools.document.openfn.ids import export_body
from tools.document.openfn.parts import edge_ends, js_condition, trigger_fields
from tools.document.yaml_io import dump_yaml
from tools.errors import DocumentError

if TYPE_CHECKING:
    from tools.credentials import Credential


def _listed(credentials: Mapping[str, Credential] | None) -> dict[str, Credential]:
    """The credentials the file lists, by name: those with an owner."""
    return {n: c for n, c in (credentials or {}).items() if c.owner}


def lightning_workflow(
    doc: WorkflowDocument, credentials: Mapping[str, Credential] | None = None
) -> tuple[str, dict[str, Any]]:
    """``(key, workflow)`` for one document, as it sits in ``workflows:``."""
    listed = _listed(credentials)
    structure = doc.structure
    ids = document_step_ids(doc)
    jobs: dict[str, Any] = {}
    for key, job in structure.jobs.items():
        entry: dict[str, Any] = {"name": job.name, "adaptor": job.adaptor}
        if job.credential:
            known = listed.get(job.credential)
            entry["credential"] = known.lightning_key() if known else job.credential
        entry["body"] = export_body(job.body)
        jobs[ids.jobs[key]] = entry
    triggers = {
        ids.triggers[key]: trigger_fields(structure, trigger, ids)
        for key, trigger in structure.triggers.items()
    }
    edges: dict[str, Any] = {}
    for edge in structure.edges.values():
        source, target = edge_ends(structure, edge)
        source_id, target_id = ids.node(source), ids.jobs[target]
        entry = (
            {"source_trigger": source_id}
            if edge.source_trigger is not None
            else {"source_job": source_id}
        )
        entry["target_job"] = target_id
        entry["condition_type"] = edge.condition_type
        if edge.condition_label:
            entry["condition_label"] = edge.condition_label
        if edge.condition_type == "js_expression":
            entry["condition_expression"] = js_condition(edge)
        entry["enabled"] = edge.enabled
        edges[edge_key(source_id, target_id)] = entry
    workflow: dict[str, Any] = {}
    if structure.name is not None:
        workflow["name"] = structure.name
    workflow.update(jobs=jobs, triggers=triggers, edges=edges)
    # The workflow's fields Planwright does not edit, as imported (never over its own).
    for field, value in kept_workflow(doc).items():
        workflow.setdefault(field, value)
    return ids.workflow, workflow


def to_lightning_project(
    docs: Sequence[WorkflowDocument],
    *,
    project_name: str | None = None,
    credentials: Mapping[str, Credential] | None = None,
) -> dict[str, Any]:
    """The project holding ``docs`` (one workflow each), as plain data.

    ``project_name`` defaults to the name of the project the first workflow was
    imported from, else to its own name. The project's other fields as imported
    (``description``, ``channels``, ``collections``, ``credentials``, ...) are written
    back from the first workflow that kept them. Two workflows that the package would
    key alike are an error naming both.
    """
    workflows: dict[str, Any] = {}
    names: dict[str, str | None] = {}
    for index, doc in enumerate(docs):
        key, workflow = lightning_workflow(doc, credentials)
        if key in workflows:
            raise DocumentError(
                f"Workflows {names[key]!r} and {doc.name!r} would both be workflow {key!r} in "
                "OpenFn; rename one before exporting them together.",
                code="export_id_clash",
                field=f"workflows.{index}",
            )
        workflows[key] = workflow
        names[key] = doc.name
    kept = next((p for p in map(kept_project, docs) if p), {})
    kept_name = kept.get("name") if isinstance(kept.get("name"), str) else None
    name = project_name or kept_name or next((d.name for d in docs if d.name), None)
    project: dict[str, Any] = {"name": name or "planwright"}
    for field, value in kept.items():
        if field not in ("name", "workflows"):
            project[field] = value
    # The project's stored credentials win over an imported file's section of the same key.
    kept_credentials = project.get("credentials")
    listed = {
        c.lightning_key(): {"name": c.name, "owner": c.owner} for c in _listed(credentials).values()
    }
    project["credentials"] = {
        **(kept_credentials if isinstance(kept_credentials, dict) else {}),
        **listed,
    }
    project["workflows"] = workflows
    return project


def to_lightning_yaml(
    docs: Sequence[WorkflowDocument],
    *,
    project_name: str | None = None,
    credentials: Mapping[str, Credential] | None = None,
) -> str:
    """:func:`to_lightning_project` as ``project.yaml`` text (bodies as block scalars)."""
    project = to_lightning_project(docs, project_name=project_name, credentials=credentials)
    return dump_yaml(_yaml_tree(project))


def _yaml_tree(value: Any) -> Any:
    if isinstance(value, dict):
        mapping = CommentedMap()
        for key, item in value.items():
            mapping[key] = _yaml_tree(item)
        if not value:
            mapping.fa.set_flow_style()
        return mapping
    if isinstance(value, list):
        return [_yaml_tree(item) for item in value]
    if isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    return value
