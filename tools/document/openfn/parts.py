"""Pieces both OpenFn exports share: trigger fields, edge ends and conditions."""

from __future__ import annotations

from typing import Any

from tools.document.openfn.ids import StepIds
from tools.document.structure import Edge, Structure, Trigger
from tools.errors import DocumentError


def trigger_fields(structure: Structure, trigger: Trigger, ids: StepIds) -> dict[str, Any]:
    """A trigger's settings in the form OpenFn's spec takes them, unset ones left out.

    The cron cursor is named by the cursor job's step id (``cron_cursor_job``):
    an exported file carries no Planwright ids for ``cron_cursor_job_id`` to hold.
    Webhook settings (``webhook_reply``, ``webhook_response_config``,
    ``custom_path``) go out verbatim.
    """
    out: dict[str, Any] = {"type": trigger.type}
    if trigger.cron_expression is not None:
        out["cron_expression"] = trigger.cron_expression
    out["enabled"] = trigger.enabled
    if trigger.cron_cursor_job_id is not None:
        cursor = next(
            (k for k, job in structure.jobs.items() if job.id == trigger.cron_cursor_job_id),
            None,
        )
        if cursor is None:
            field = f"triggers.{trigger.key}.cron_cursor_job_id"
            raise DocumentError(
                f"{field}: {trigger.cron_cursor_job_id!r} is the id of no step in this workflow.",
                code="export_unknown_reference",
                field=field,
            )
        out["cron_cursor_job"] = ids.jobs[cursor]
    for name in ("webhook_reply", "webhook_response_config", "custom_path"):
        value = getattr(trigger, name)
        if value is not None:
            out[name] = value
    return out


def edge_ends(structure: Structure, edge: Edge) -> tuple[str, str]:
    """The edge's source and target keys; raises naming the field that points nowhere."""
    where = f"edges.{edge.key}"
    if (edge.source_job is None) == (edge.source_trigger is None):
        raise DocumentError(
            f"{where}: needs exactly one of source_job or source_trigger.",
            code="export_invalid_edge",
            field=where,
        )
    if edge.source_trigger is not None and edge.source_trigger not in structure.triggers:
        raise DocumentError(
            f"{where}.source_trigger: there is no trigger {edge.source_trigger!r}.",
            code="export_unknown_reference",
            field=f"{where}.source_trigger",
        )
    if edge.source_job is not None and edge.source_job not in structure.jobs:
        raise DocumentError(
            f"{where}.source_job: there is no step {edge.source_job!r}.",
            code="export_unknown_reference",
            field=f"{where}.source_job",
        )
    if edge.target_job not in structure.jobs:
        raise DocumentError(
            f"{where}.target_job: there is no step {edge.target_job!r}.",
            code="export_unknown_reference",
            field=f"{where}.target_job",
        )
    return edge.source, edge.target_job


def js_condition(edge: Edge) -> str:
    """The expression of a ``js_expression`` edge; raises when it has none."""
    expression = edge.condition_expression
    if expression is None or not expression.strip():
        field = f"edges.{edge.key}.condition_expression"
        raise DocumentError(
            f"{field}: a js_expression edge needs an expression.",
            code="export_invalid_edge",
            field=field,
        )
    return expression
