"""Importing a Lightning ``project.yaml``: one Planwright workflow per project workflow.

Reads what Lightning exports and what ``@openfn/project`` writes (its
``serialize.spec``): ``{name?, credentials?, workflows: {<key>: {name?, jobs,
triggers, edges}}}``. Fields are read the way the package reads them: a job
without a name is named by its key, an edge without ``enabled`` is disabled,
``condition_type`` defaults to ``always``. Where the package would silently
drop something (an edge to a missing step) this refuses the whole file with
the field named. Keys stay as they are when they are valid Planwright keys;
ids are minted (the file carries none); a job's ``credential`` is kept by name.
Fields Planwright does not edit are kept on their entries; project-level data
(credential owners, collections, ``lock_version``) stays with the project.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tools.document import WorkflowDocument
from tools.document.openfn.building import DocumentBuilder
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
_TRIGGER_FIELDS = {"id", "type", "enabled", "cron_cursor_job", "cron_cursor_job_id"}
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
    text_: str, *, new_id: Callable[[], str], max_bytes: int = DEFAULT_MAX_BYTES
) -> list[WorkflowDocument]:
    """Every workflow of a project.yaml, in file order; nothing unless all of them load."""
    data = load_yaml(text_, max_bytes=max_bytes)
    return from_lightning_project(data, new_id=new_id, max_bytes=max_bytes)


def from_lightning_project(
    data: Any, *, new_id: Callable[[], str], max_bytes: int = DEFAULT_MAX_BYTES
) -> list[WorkflowDocument]:
    project = mapping(data, "project")
    workflows = mapping(project.get("workflows"), "workflows")
    if not workflows:
        bad("workflows", "the project holds no workflow.")
    return [
        _workflow(key, mapping(value, f"workflows.{key}"), f"workflows.{key}", new_id, max_bytes)
        for key, value in workflows.items()
    ]


def _workflow(
    key: str,
    node: Mapping[str, Any],
    field: str,
    new_id: Callable[[], str],
    max_bytes: int,
) -> WorkflowDocument:
    builder = DocumentBuilder(text(node, "name", field) or key, new_id)
    jobs = mapping(node.get("jobs"), f"{field}.jobs", optional=True)
    for job_key, value in jobs.items():
        where = f"{field}.jobs.{job_key}"
        job = mapping(value, where)
        builder.add_job(
            job_key,
            where,
            name=text(job, "name", where) or job_key,
            adaptor=text(job, "adaptor", where, required=True) or "",
            body=text(job, "body", where),
            credential=text(job, "credential", where),
            given_id=text(job, "id", where),
            extra=extras(job, _JOB_FIELDS),
        )
    triggers = mapping(node.get("triggers"), f"{field}.triggers", optional=True)
    for trigger_key, value in triggers.items():
        where = f"{field}.triggers.{trigger_key}"
        trigger = mapping(value, where)
        settings, cursor = trigger_settings(trigger, where)
        builder.add_trigger(
            trigger_key,
            where,
            type=text(trigger, "type", where, required=True) or "",
            enabled=flag(trigger, "enabled", where, default=False),
            settings=settings,
            cursor_job=cursor,
            given_id=text(trigger, "id", where),
            extra=extras(trigger, _TRIGGER_FIELDS | set(TRIGGER_SETTINGS)),
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
            # @openfn/project reads `disabled: !edge.enabled`: no `enabled` is disabled.
            enabled=flag(edge, "enabled", where, default=False),
            given_id=text(edge, "id", where),
            extra=extras(edge, _EDGE_FIELDS),
        )
    return builder.build(max_bytes=max_bytes)
