"""The view of a workflow the model sees: structure only, no ids, no bodies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from tools.catalogue.names import adaptor_short_name
from tools.document.reach import unreachable_jobs
from tools.document.structure import Change, Edge, Job, Structure, Trigger
from tools.jobcode import body_line_count, has_code

CHANGES_HEADING = "Changed entries as they are now:"
EDGES_HEADING = "Edges (on_job_success unless another condition is shown):"
"""The default condition is left off each edge line: on a 200-step chain that is a
fifth of the structure's tokens, sent with every request of a turn."""
"""First line of :func:`render_changes` (what readers of tool results split on)."""
STEPS_HEADING = "Steps (a step without [adaptor] uses the adaptor of the step above it):"
"""The structure chart's step heading (``render_changes`` shows every step's adaptor)."""
CHAINED_HEADING = (
    "Edges (on_job_success unless another condition is shown; a line "
    "'a -> b -> c' is the two edges a -> b and b -> c):"
)
"""The structure's edge heading when plain edges are written as chains: a long
sequence of steps costs one key per step instead of a line per edge."""
UNREACHABLE_HEADING = "Not reached from any trigger, so never run:"
"""Last line of :func:`render_structure` when steps no trigger reaches exist."""


@lru_cache(maxsize=8192)
def _code_stats(body: str | None) -> tuple[bool, int]:
    """Parsing is the costly part of redaction; bodies are immutable strings, so cache."""
    return has_code(body), body_line_count(body or "")


def redact(structure: Structure) -> dict[str, Any]:
    id_to_key = {job.id: job.key for job in structure.jobs.values() if job.id}
    return {
        "name": structure.name,
        "jobs": [_job_view(job) for job in structure.jobs.values()],
        "triggers": [_trigger_view(t, id_to_key) for t in structure.triggers.values()],
        "edges": [_edge_view(edge) for edge in structure.edges.values()],
    }


def _job_view(job: Job) -> dict[str, Any]:
    with_code, lines = _code_stats(job.body)
    return {
        "key": job.key,
        "name": job.name,
        "adaptor": job.adaptor,
        "has_code": with_code,
        "code_lines": lines,
        # A credential's name only (never a secret), and only when one is set.
        **({"credential": job.credential} if job.credential else {}),
    }


def _trigger_view(trigger: Trigger, id_to_key: Mapping[str, str]) -> dict[str, Any]:
    item: dict[str, Any] = {"key": trigger.key, "type": trigger.type, "enabled": trigger.enabled}
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
    return item


def _edge_view(edge: Edge) -> dict[str, Any]:
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
    return entry


def render_structure(structure: Structure) -> str:
    """A compact text chart of the structure, for prompts and tool results."""
    view = redact(structure)
    lines = [f"Workflow: {view['name'] or '(unnamed)'}"]
    if not view["jobs"]:
        lines.append("Steps: (none)")
    else:
        lines.append(STEPS_HEADING)
        previous = None
        for job in view["jobs"]:
            # A step whose adaptor is the one above leaves it out: most workflows run
            # long stretches on one adaptor, and the chart is on every request.
            short = adaptor_short_name(job["adaptor"])
            lines.append(_job_line(job, show_adaptor=short != previous))
            previous = short
    lines.extend(_trigger_line(trigger) for trigger in view["triggers"])
    if view["edges"]:
        edge_lines = _edge_lines(view["edges"])
        chained = any(line.count(" -> ") > 1 for line in edge_lines)
        lines.append(CHAINED_HEADING if chained else EDGES_HEADING)
        lines.extend(edge_lines)
    # Said once per turn with the chart (tool results note it after each change too).
    stranded = unreachable_jobs(structure)
    if stranded:
        lines.append(UNREACHABLE_HEADING + " " + ", ".join(stranded))
    return "\n".join(lines)


def render_changes(structure: Structure, changes: Sequence[Change]) -> str:
    """The entries ``changes`` touched, as they are now, in the lines of ``render_structure``.

    A tool result carries this instead of the whole structure, so the model's
    view stays exact at the cost of the change: changed or added steps (with
    every edge that touches them, since a rename re-keys those), triggers and
    edges as they now read, and what was removed.
    """
    if not changes:
        return ""
    # Only the touched entries are redacted (a tool result after every edit; the
    # whole structure is 400 entries at 200 steps).
    jobs = structure.jobs
    triggers = structure.triggers
    edges = structure.edges
    job_keys: list[str] = []
    trigger_keys: list[str] = []
    edge_keys: list[str] = []
    removed: list[str] = []
    named = False
    for change in changes:
        if change.action == "removed":
            label = {"job": "step", "trigger": "trigger", "edge": "edge"}.get(change.kind, "")
            removed.append(f"{label} {change.key}".strip())
        elif change.kind == "workflow":
            named = True
        elif change.kind == "job" and change.key in jobs:
            job_keys.append(change.key)
            edge_keys += [k for k, e in edges.items() if change.key in (e.source, e.target_job)]
        elif change.kind == "trigger" and change.key in triggers:
            trigger_keys.append(change.key)
            edge_keys += [k for k, e in edges.items() if e.source == change.key]
        elif change.kind == "edge" and change.key in edges:
            edge_keys.append(change.key)
    lines = [CHANGES_HEADING]
    if named:
        lines.append(f"Workflow: {structure.name or '(unnamed)'}")
    if job_keys:
        lines.append("Steps:")
        lines.extend(_job_line(_job_view(jobs[k])) for k in dict.fromkeys(job_keys))
    if trigger_keys:
        id_to_key = {job.id: job.key for job in jobs.values() if job.id}
        lines.extend(
            _trigger_line(_trigger_view(triggers[k], id_to_key))
            for k in dict.fromkeys(trigger_keys)
        )
    if edge_keys:
        lines.append(EDGES_HEADING)
        lines.extend(_edge_line(_edge_view(edges[k])) for k in dict.fromkeys(edge_keys))
    live = {*jobs, *triggers, *edges}
    gone = [r for r in dict.fromkeys(removed) if r.split(" ", 1)[-1] not in live]
    if gone:
        lines.append("Removed: " + ", ".join(gone))
    return "\n".join(lines)


def _job_line(job: dict[str, Any], *, show_adaptor: bool = True) -> str:
    # "(N lines)" of code / "(no code)": short, since it repeats on every step.
    code = f"{job['code_lines']} lines" if job["has_code"] else "no code"
    adaptor = f" [{adaptor_short_name(job['adaptor'])}]" if show_adaptor else ""
    credential = f" credential {job['credential']!r}" if "credential" in job else ""
    return f"- {job['key']}: {job['name']!r}{adaptor}{credential} ({code})"


def _trigger_line(trigger: dict[str, Any]) -> str:
    state = "enabled" if trigger["enabled"] else "disabled"
    schedule = f" '{trigger['cron_expression']}'" if "cron_expression" in trigger else ""
    return f"Trigger {trigger['key']}: {trigger['type']}{schedule}, {state}"


def _edge_lines(edges: list[dict[str, Any]]) -> list[str]:
    """Edge lines in order; a plain edge (on success, no label, enabled) that leaves
    where the line before it ends extends that line into a chain."""
    lines: list[str] = []
    chain_end: str | None = None
    for edge in edges:
        line = _edge_line(edge)
        plain = line == f"- {edge['source']} -> {edge['target']}"
        if plain and chain_end is not None and edge["source"] == chain_end:
            lines[-1] += f" -> {edge['target']}"
        else:
            lines.append(line)
        chain_end = edge["target"] if plain else None
    return lines


def _edge_line(edge: dict[str, Any]) -> str:
    condition = edge["condition_type"]
    if "condition_expression" in edge:
        condition = f"when {edge['condition_expression']}"
    label = f" [{edge['condition_label']}]" if "condition_label" in edge else ""
    off = " (disabled)" if edge.get("enabled") is False else ""
    shown = "" if condition == "on_job_success" and not label else f": {condition}"
    return f"- {edge['source']} -> {edge['target']}{shown}{label}{off}"
