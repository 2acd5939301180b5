"""The workflow as the terminal draws it: an indented tree of steps under the
trigger, with each edge's condition, and which keys a change touched.

The words come from the tools' pure helpers (the condition text, the adaptor
short name, whether a body holds code), the same ones the server uses.
"""

from __future__ import annotations

from typing import Any

from tools.catalogue.names import adaptor_short_name, split_adaptor
from tools.document import WorkflowDocument
from tools.document.structure import Edge, Structure, condition_text
from tools.jobcode import has_code


def edge_text(edge: Edge) -> str:
    """The edge's condition in words, and whether it is disabled."""
    text = condition_text(edge.condition_type, edge.condition_expression, edge.condition_label)
    return text if edge.enabled else f"{text} (disabled)"


def adaptor_text(adaptor: str) -> str:
    """``http`` for ``@openfn/language-http@latest``; ``http 6.5.1`` for a pinned version."""
    _, version = split_adaptor(adaptor)
    short = adaptor_short_name(adaptor)
    return f"{short} {version}" if version and version != "latest" else short


def render_tree(
    yaml_text: str,
    *,
    changed: set[str] | frozenset[str] = frozenset(),
    paint: Any = None,
) -> list[str]:
    """The workflow as an indented tree: trigger, then each step under the step
    (or trigger) that leads to it, with the edge's condition; ``*`` marks ``changed``
    keys (jobs, triggers or edges)."""
    style = paint or (lambda text, _style: text)
    try:
        structure: Structure = WorkflowDocument.from_yaml(yaml_text).structure
    except Exception as exc:
        return [f"(cannot draw the workflow: {exc})"]
    jobs, triggers = structure.jobs, structure.triggers
    children: dict[str, list[Edge]] = {}
    incoming: dict[str, int] = {}
    for edge in structure.edges.values():
        source = ("trigger:" if edge.source_job is None else "job:") + edge.source
        children.setdefault(source, []).append(edge)
        incoming[edge.target_job] = incoming.get(edge.target_job, 0) + 1

    lines = [style(structure.name or "Untitled workflow", "bold")]
    if not jobs and not triggers:
        return [*lines, "  (no steps yet)"]
    seen: set[str] = set()

    def mark(key: str) -> str:
        return style(" *", "yellow") if key in changed else ""

    def job_label(key: str) -> str:
        job = jobs.get(key)
        if job is None:
            return f"{key} (missing)"
        code = ", has code" if has_code(job.body) else ""
        return f"{job.name} [{adaptor_text(job.adaptor)}{code}]{mark(key)}"

    def walk(source: str, prefix: str) -> None:
        edges = children.get(source, [])
        for index, edge in enumerate(edges):
            last = index == len(edges) - 1
            branch = "└─ " if last else "├─ "
            condition = edge_text(edge)
            if edge.condition_type == "on_job_failure":
                condition = style(condition, "red")
            target = edge.target_job
            edge_mark = style(" *", "yellow") if edge.key in changed else ""
            if target in seen:
                name = jobs[target].name if target in jobs else target
                lines.append(f"{prefix}{branch}{condition}{edge_mark} → ↪ {name} (see above)")
                continue
            seen.add(target)
            lines.append(f"{prefix}{branch}{condition}{edge_mark} → {job_label(target)}")
            walk(f"job:{target}", prefix + ("   " if last else "│  "))

    for key, trigger in triggers.items():
        what = f"cron {trigger.cron_expression}" if trigger.type == "cron" else trigger.type
        state = "enabled" if trigger.enabled else "disabled"
        lines.append(f"⚡ {what} trigger ({state}){mark(key)}")
        walk(f"trigger:{key}", "")
    roots = [key for key in jobs if key not in seen and not incoming.get(key)]
    loose = [key for key in jobs if key not in seen]
    if loose:
        if triggers:
            lines.append(style("not reached from the trigger:", "dim"))
        for key in roots or loose[:1]:
            if key in seen:
                continue
            seen.add(key)
            lines.append(f"• {job_label(key)}")
            walk(f"job:{key}", "  ")
        for key in jobs:  # what is left sits on a cycle
            if key not in seen:
                seen.add(key)
                lines.append(f"• {job_label(key)}")
                walk(f"job:{key}", "  ")
    if changed & (set(jobs) | set(triggers) | set(structure.edges)):
        lines.append(style("(* changed)", "dim"))
    return lines


def changed_keys(before: str, after: str) -> set[str]:
    """Keys of jobs, triggers and edges that are new or different in ``after``."""
    try:
        old = WorkflowDocument.from_yaml(before).structure if before.strip() else Structure()
        new = WorkflowDocument.from_yaml(after).structure
    except Exception:
        return set()
    keys: set[str] = set()
    for section in ("jobs", "triggers", "edges"):
        previous = old.section(section)
        for key, entry in new.section(section).items():
            if previous.get(key) != entry:
                keys.add(key)
    return keys
