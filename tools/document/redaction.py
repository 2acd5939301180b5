"""The view of a workflow the model sees: structure only, no ids, no bodies."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tools.catalogue.names import adaptor_short_name
from tools.document.structure import Structure
from tools.jobcode import body_line_count, has_code


@lru_cache(maxsize=8192)
def _code_stats(body: str | None) -> tuple[bool, int]:
    """Parsing is the costly part of redaction; bodies are immutable strings, so cache."""
    return has_code(body), body_line_count(body or "")


def redact(structure: Structure) -> dict[str, Any]:
    jobs = []
    for job in structure.jobs.values():
        with_code, lines = _code_stats(job.body)
        jobs.append(
            {
                "key": job.key,
                "name": job.name,
                "adaptor": job.adaptor,
                "has_code": with_code,
                "code_lines": lines,
                # A credential's name only (never a secret), and only when one is set.
                **({"credential": job.credential} if job.credential else {}),
            }
        )
    id_to_key = {job.id: job.key for job in structure.jobs.values() if job.id}
    triggers = []
    for trigger in structure.triggers.values():
        item: dict[str, Any] = {
            "key": trigger.key,
            "type": trigger.type,
            "enabled": trigger.enabled,
        }
        if trigger.cron_expression:
            item["cron_expression"] = trigger.cron_expression
        if trigger.cron_cursor_job_id:
            item["cron_cursor_job"] = id_to_key.get(
                trigger.cron_cursor_job_id, trigger.cron_cursor_job_id
            )
        for name in ("webhook_reply", "custom_path"):
            if getattr(trigger, name) is not None:
                item[name] = getattr(trigger, name)
        if trigger.webhook_response_config is not None:
            item["webhook_response_config"] = "(set)"
        triggers.append(item)
    edges = []
    for edge in structure.edges.values():
        entry: dict[str, Any] = {
            "source": edge.source,
            "target": edge.target_job,
            "condition_type": edge.condition_type,
        }
        if edge.condition_expression:
            entry["condition_expression"] = edge.condition_expression
        if edge.condition_label:
            entry["condition_label"] = edge.condition_label
        if not edge.enabled:
            entry["enabled"] = False
        edges.append(entry)
    return {"name": structure.name, "jobs": jobs, "triggers": triggers, "edges": edges}


def render_structure(structure: Structure) -> str:
    """A compact text chart of the structure, for prompts and tool results."""
    view = redact(structure)
    lines = [f"Workflow: {view['name'] or '(unnamed)'}"]
    if not view["jobs"]:
        lines.append("Steps: (none)")
    else:
        lines.append("Steps:")
        for job in view["jobs"]:
            code = f"{job['code_lines']} lines of code" if job["has_code"] else "no code yet"
            short = adaptor_short_name(job["adaptor"])
            credential = f" credential {job['credential']!r}" if "credential" in job else ""
            lines.append(f"- {job['key']}: {job['name']!r} [{short}]{credential} ({code})")
    for trigger in view["triggers"]:
        state = "enabled" if trigger["enabled"] else "disabled"
        schedule = f" '{trigger['cron_expression']}'" if "cron_expression" in trigger else ""
        lines.append(f"Trigger {trigger['key']}: {trigger['type']}{schedule}, {state}")
    if view["edges"]:
        lines.append("Edges:")
        for edge in view["edges"]:
            condition = edge["condition_type"]
            if "condition_expression" in edge:
                condition = f"when {edge['condition_expression']}"
            label = f" [{edge['condition_label']}]" if "condition_label" in edge else ""
            off = " (disabled)" if edge.get("enabled") is False else ""
            lines.append(f"- {edge['source']} -> {edge['target']}: {condition}{label}{off}")
    return "\n".join(lines)
