"""Importing a Lightning ``project.yaml``: one Planwright workflow per project workflow.

Reads what Lightning exports, what ``@openfn/project`` writes (its
``serialize.spec``) and what ``openfn deploy`` reads: ``{name?, description?,
credentials?, channels?, collections?, workflows: {<key>: {name?, jobs, triggers,
edges}}}``. Fields are read the way the deploy reads them: a job without a name is
named by its key, an empty job entry is a job named by its key, a job without an
adaptor gets Lightning's default (``@openfn/language-common@latest``), an edge or
trigger without ``enabled`` is enabled (the deploy's ``pickValue(..., 'enabled',
true)``), ``condition_type`` defaults to ``always``, a body may be ``{content}`` or
``{path}`` (the file's text from ``files``, by that path; refused, naming the field,
when it is not given). Where the package would silently drop something (an edge to
a missing step) this refuses the whole file with the field named. Keys stay as they
are when they are valid Planwright keys; ids are minted (the file carries none); a
job's ``credential`` is kept by name. Fields Planwright does not edit are kept on
their entries; the project's name, description and every other project section
(``credentials``, ``channels``, ``collections``, ...) and a workflow's unknown fields
are kept in each document's ``openfn`` field (:mod:`.context`), and a trigger keyed
other than by its type keeps that key (``openfn_key``), so an export writes them back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tools.document import WorkflowDocument
from tools.document.openfn.building import DocumentBuilder
from tools.document.openfn.context import DEFAULT_ADAPTOR, job_body, project_context
from tools.document.openfn.fields import (
    TRIGGER_SETTINGS,
    bad,
    extras,
    flag,
    mapping,
    text,
    trigger_settings,
)
from tools.document.yaml_io import DEFAULT_MAX_BYTES, load_yaml

_JOB_FIELDS = {"id", "name", "adaptor", "body", "credential"}
_TRIGGER_FIELDS = {"id", "type", "enabled", "cron_cursor_job", "cron_cursor_job_id", "openfn_key"}
_EDGE_FIELDS = {
    "id",
    "source_job",
    "source_trigger",
    "target_job",
    "condition_type",
    "condition_expression",
    "condition_label",
    "enabled",
}


def from_lightning_yaml(
    text_: str,
    *,
    new_id: Callable[[], str],
    max_bytes: int = DEFAULT_MAX_BYTES,
    files: Mapping[str, str] | None = None,
) -> list[WorkflowDocument]:
    """Every workflow of a project.yaml, in file order; nothing unless all of them load.
    ``files``: path -> text of the files bodies name (``body: {path: ...}``)."""
    data = load_yaml(text_, max_bytes=max_bytes)
    return from_lightning_project(data, new_id=new_id, max_bytes=max_bytes, files=files)


def from_lightning_project(
    data: Any,
    *,
    new_id: Callable[[], str],
    max_bytes: int = DEFAULT_MAX_BYTES,
    files: Mapping[str, str] | None = None,
) -> list[WorkflowDocument]:
    project = mapping(data, "project")
    workflows = mapping(project.get("workflows"), "workflows")
    if not workflows:
        bad("workflows", "the project holds no workflow.")
    kept = project_context(project)
    return [
        _workflow(
            key,
            mapping(value, f"workflows.{key}"),
            f"workflows.{key}",
            new_id,
            max_bytes,
            files or {},
            kept,
        )
        for key, value in workflows.items()
    ]


_WORKFLOW_FIELDS = {"id", "name", "jobs", "triggers", "edges"}


def _workflow(
    key: str,
    node: Mapping[str, Any],
    field: str,
    new_id: Callable[[], str],
    max_bytes: int,
    files: Mapping[str, str],
    project: Mapping[str, Any],
) -> WorkflowDocument:
    builder = DocumentBuilder(text(node, "name", field) or key, new_id)
    context: dict[str, Any] = {}
    if project:
        context["project"] = dict(project)
    workflow_extra = extras(node, _WORKFLOW_FIELDS)
    if workflow_extra:
        context["workflow"] = workflow_extra
    if context:
        builder.set_context(context)
    jobs = mapping(node.get("jobs"), f"{field}.jobs", optional=True)
    for job_key, value in jobs.items():
        where = f"{field}.jobs.{job_key}"
        job = mapping(value, where, optional=True)  # an empty entry: the deploy's defaults
        builder.add_job(
            job_key,
            where,
            name=text(job, "name", where) or job_key,
            adaptor=text(job, "adaptor", where) or DEFAULT_ADAPTOR,
            body=job_body(job, where, files),
            credential=text(job, "credential", where),
            given_id=text(job, "id", where),
            extra=extras(job, _JOB_FIELDS),
        )
    triggers = mapping(node.get("triggers"), f"{field}.triggers", optional=True)
    for trigger_key, value in triggers.items():
        where = f"{field}.triggers.{trigger_key}"
        trigger = mapping(value, where)
        settings, cursor = trigger_settings(trigger, where)
        trigger_type = text(trigger, "type", where, required=True) or ""
        builder.add_trigger(
            trigger_key,
            where,
            type=trigger_type,
            enabled=flag(trigger, "enabled", where, default=True),
            settings=settings,
            cursor_job=cursor,
            given_id=text(trigger, "id", where),
            extra=extras(trigger, _TRIGGER_FIELDS | set(TRIGGER_SETTINGS))
            | ({"openfn_key": trigger_key} if trigger_key != trigger_type else {}),
        )
    edges = mapping(node.get("edges"), f"{field}.edges", optional=True)
    for edge_name, value in edges.items():
        where = f"{field}.edges.{edge_name}"
        edge = mapping(value, where)
        source_job = text(edge, "source_job", where)
        source_trigger = text(edge, "source_trigger", where)
        if (source_job is None) == (source_trigger is None):
            bad(where, "needs exactly one of source_job or source_trigger.")
        source_field = f"{where}.{'source_job' if source_job else 'source_trigger'}"
        source = builder.node(source_job or source_trigger or "", source_field)
        if builder.is_trigger(source) != (source_trigger is not None):
            kind = "trigger" if source_trigger is not None else "step"
            bad(source_field, f"{source_job or source_trigger!r} is not a {kind}.")
        target_name = text(edge, "target_job", where, required=True) or ""
        builder.add_edge(
            where,
            source=source,
            target=builder.node(target_name, f"{where}.target_job"),
            condition_type=text(edge, "condition_type", where) or "always",
            expression=text(edge, "condition_expression", where),
            label=text(edge, "condition_label", where),
            # `openfn deploy` reads pickValue(spec, state, 'enabled', true): no `enabled` is on.
            enabled=flag(edge, "enabled", where, default=True),
            given_id=text(edge, "id", where),
            extra=extras(edge, _EDGE_FIELDS),
        )
    return builder.build(max_bytes=max_bytes)
