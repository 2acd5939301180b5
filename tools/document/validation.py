"""Whole-structure rules, enforced in code after every draft.

``validate`` lists every problem of a structure. The registry blocks a tool
call only on problems the call *introduces* (those not present before it), so
a document that arrives broken can be repaired one call at a time.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

from tools.catalogue.adaptors import AdaptorCatalogue
from tools.catalogue.names import split_adaptor
from tools.document.conditions import (
    SUCCESS_GUARD,
    ExpressionProblem,
    expression_problem,
    looks_at_errors,
)
from tools.document.cron import cron_problem
from tools.document.names import MAX_NAME_LENGTH, derive_key, is_valid_key, sanitise_name
from tools.document.reach import duplicate_ids, reachable_jobs, unreachable_jobs
from tools.document.structure import Structure


@dataclass(frozen=True)
class Problem:
    code: str
    subject: str
    message: str
    blocking: bool = True
    once: bool = False
    """A note said only by the call that introduces it, not after every later call."""


def validate(structure: Structure, catalogue: AdaptorCatalogue) -> list[Problem]:
    problems: list[Problem] = []
    problems += _job_problems(structure, catalogue)
    problems += _trigger_problems(structure)
    problems += _edge_problems(structure)
    problems += _cycle_problems(structure)
    problems += _graph_problems(structure)
    problems += _base_url_problems(structure, catalogue)
    return problems


def _base_url_problems(structure: Structure, catalogue: AdaptorCatalogue) -> list[Problem]:
    """A note per step that calls its adaptor with relative paths and has no credential
    (its ``baseUrl`` comes from one): OpenFn fails it."""
    from tools.credentials import base_url_warnings  # tools.credentials reads structures

    return [
        Problem("relative_url_without_base_url", f"jobs.{key}", message, blocking=False, once=True)
        for key, message in base_url_warnings(structure, catalogue).items()
    ]


def _graph_problems(structure: Structure) -> list[Problem]:
    """Duplicate ids (blocking) and steps no trigger reaches (a note: they never run)."""
    out = [
        Problem(
            "duplicate_id",
            f"ids.{id_}",
            f"Id {id_!r} is used by more than one entry ({', '.join(where)}); ids must be unique.",
        )
        for id_, where in duplicate_ids(structure).items()
    ]
    unreachable = unreachable_jobs(structure)
    behind_disabled = reachable_jobs(structure, with_disabled=True) if unreachable else set()
    for key in unreachable:
        how = (
            "only a disabled edge leads to it"
            if key in behind_disabled
            else "no edge from the trigger or from a step that runs leads to it"
        )
        out.append(
            Problem(
                "unreachable_step",
                f"jobs.{key}",
                f"Step {key!r} is not reached from any trigger ({how}), so it never runs.",
                blocking=False,
            )
        )
    return out


def _job_problems(structure: Structure, catalogue: AdaptorCatalogue) -> list[Problem]:
    out: list[Problem] = []
    # OpenFn derives step ids from slugified names, so "Check coverage" and
    # "check-coverage" would collide there: compare names by slug.
    names = Counter(derive_key(job.name) for job in structure.jobs.values())
    for key, job in structure.jobs.items():
        subject = f"jobs.{key}"
        if not is_valid_key(key):
            out.append(
                Problem(
                    "invalid_key",
                    subject,
                    f"Step key {key!r} must be letters, digits, '-' or '_' (at most 100).",
                )
            )
        if key in structure.triggers:
            out.append(
                Problem("node_key_clash", subject, f"{key!r} is both a step and a trigger key.")
            )
        if not job.name or sanitise_name(job.name) != job.name:
            out.append(
                Problem(
                    "invalid_name",
                    subject,
                    f"Step name {job.name!r} may only hold ASCII letters, digits, spaces, "
                    "'_' and '-'.",
                )
            )
        if len(job.name) > MAX_NAME_LENGTH:
            out.append(
                Problem(
                    "name_too_long", subject, f"Step name is longer than {MAX_NAME_LENGTH} chars."
                )
            )
        if names[derive_key(job.name)] > 1:
            out.append(
                Problem(
                    "duplicate_job_name",
                    f"jobs.name.{derive_key(job.name)}",
                    f"More than one step is named like {job.name!r}; display names must be "
                    "unique (ignoring case, spaces and punctuation).",
                )
            )
        if catalogue.get(split_adaptor(job.adaptor)[0]) is None:
            out.append(
                Problem(
                    "unknown_adaptor",
                    subject,
                    f"Step {key!r} uses unknown adaptor {job.adaptor!r}.",
                )
            )
    return out


def _trigger_problems(structure: Structure) -> list[Problem]:
    out: list[Problem] = []
    job_ids = {job.id for job in structure.jobs.values() if job.id}
    types = Counter(trigger.type for trigger in structure.triggers.values())
    for key, trigger in structure.triggers.items():
        subject = f"triggers.{key}"
        if types[trigger.type] > 1:
            out.append(
                Problem(
                    "duplicate_trigger_type",
                    f"triggers.type.{trigger.type}",
                    f"More than one {trigger.type} trigger; OpenFn identifies triggers by type.",
                )
            )
        if trigger.type == "cron":
            if not trigger.cron_expression:
                out.append(
                    Problem(
                        "missing_cron_expression", subject, "A cron trigger needs cron_expression."
                    )
                )
            else:
                reason = cron_problem(trigger.cron_expression)
                if reason:
                    out.append(
                        Problem(
                            "invalid_cron",
                            subject,
                            f"Invalid cron {trigger.cron_expression!r}: {reason}.",
                        )
                    )
        cursor = trigger.cron_cursor_job_id
        if cursor and cursor not in job_ids and cursor not in structure.jobs:
            out.append(
                Problem(
                    "unknown_cursor_job", subject, f"Cron cursor job {cursor!r} does not exist."
                )
            )
        outgoing = structure.edges_from(key)
        if len(outgoing) > 1:
            out.append(
                Problem(
                    "trigger_multiple_edges",
                    subject,
                    f"Trigger {key!r} connects to {len(outgoing)} steps; a trigger starts "
                    "exactly one step.",
                )
            )
        elif not outgoing and structure.jobs:
            out.append(
                Problem(
                    "trigger_not_connected",
                    subject,
                    f"Trigger {key!r} is not connected to a step yet.",
                    blocking=False,
                )
            )
    return out


def _edge_problems(structure: Structure) -> list[Problem]:
    out: list[Problem] = []
    pairs = Counter((e.source, e.target_job) for e in structure.edges.values())
    for key, edge in structure.edges.items():
        subject = f"edges.{key}"
        if (edge.source_job is None) == (edge.source_trigger is None):
            out.append(
                Problem(
                    "invalid_edge_source",
                    subject,
                    f"Edge {key!r} needs exactly one of source_job or source_trigger.",
                )
            )
        if edge.source_job is not None and edge.source_job not in structure.jobs:
            out.append(
                Problem(
                    "unknown_edge_source",
                    subject,
                    f"Edge {key!r} starts at missing step {edge.source_job!r}.",
                )
            )
        if edge.source_trigger is not None:
            if edge.source_trigger not in structure.triggers:
                out.append(
                    Problem(
                        "unknown_edge_source",
                        subject,
                        f"Edge {key!r} starts at missing trigger {edge.source_trigger!r}.",
                    )
                )
            if edge.condition_type in ("on_job_success", "on_job_failure"):
                out.append(
                    Problem(
                        "invalid_trigger_condition",
                        subject,
                        f"Edge {key!r} leaves a trigger, so it cannot be {edge.condition_type}.",
                    )
                )
        if edge.target_job not in structure.jobs:
            out.append(
                Problem(
                    "unknown_edge_target",
                    subject,
                    f"Edge {key!r} points at missing step {edge.target_job!r}.",
                )
            )
        has_expression = bool(edge.condition_expression and edge.condition_expression.strip())
        if edge.condition_type == "js_expression" and not has_expression:
            out.append(
                Problem(
                    "missing_condition_expression",
                    subject,
                    f"Edge {key!r} is js_expression but has no condition_expression.",
                )
            )
        bad = _expression_problem(edge.condition_expression) if has_expression else None
        if edge.condition_type == "js_expression" and bad is not None:
            out.append(
                Problem(
                    "invalid_condition_expression",
                    subject,
                    f"Edge {key!r}: condition_expression is not a JavaScript expression: {bad}.",
                )
            )
        if (
            edge.condition_type == "js_expression"
            and has_expression
            and bad is None
            and edge.source_job is not None
            and not looks_at_errors(edge.condition_expression or "")
        ):
            out.append(
                Problem(
                    "unguarded_condition",
                    subject,
                    f"Edge {key!r} is also checked when {edge.source_job!r} fails (OpenFn "
                    "evaluates js_expression edges for failed steps too); for 'on success and "
                    f"X' write {SUCCESS_GUARD} && (X).",
                    blocking=False,
                )
            )
        if edge.condition_type != "js_expression" and edge.condition_expression is not None:
            out.append(
                Problem(
                    "unexpected_condition_expression",
                    subject,
                    f"Edge {key!r} has a condition_expression but is {edge.condition_type}; "
                    "only js_expression edges take one.",
                )
            )
        if pairs[(edge.source, edge.target_job)] > 1:
            out.append(
                Problem(
                    "duplicate_edge",
                    f"edges.{edge.source}->{edge.target_job}",
                    f"There is more than one edge from {edge.source!r} to {edge.target_job!r}.",
                )
            )
    return out


@functools.lru_cache(maxsize=4096)
def _expression_problem(expression: str | None) -> ExpressionProblem | None:
    # Validation runs after every draft; a document's conditions rarely change.
    return expression_problem(expression or "")


def _cycle_problems(structure: Structure) -> list[Problem]:
    """One problem per cycle among job-to-job edges.

    Kahn's algorithm is the fast path: if every step drains there is no cycle.
    Otherwise the undrained steps (those on a cycle plus those downstream of
    one) are split into strongly connected components, and each component
    that loops gets its own problem, with its steps in the subject, so a call
    that adds a new cycle to a document that already had one is still blocked.
    """
    indegree = dict.fromkeys(structure.jobs, 0)
    successors: dict[str, list[str]] = {k: [] for k in structure.jobs}
    for edge in structure.edges.values():
        src, dst = edge.source_job, edge.target_job
        if src in successors and dst in indegree:
            successors[src].append(dst)
            indegree[dst] += 1
    ready = [k for k, d in indegree.items() if d == 0]
    drained = 0
    while ready:
        node = ready.pop()
        drained += 1
        for nxt in successors[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    if drained == len(indegree):
        return []
    undrained = [k for k, d in indegree.items() if d > 0]
    inside = set(undrained)
    graph = {k: [n for n in successors[k] if n in inside] for k in undrained}
    loops = [
        sorted(group)
        for group in _strongly_connected(undrained, graph)
        if len(group) > 1 or group[0] in graph[group[0]]
    ]
    return [
        Problem(
            "cycle",
            "edges.cycle." + ",".join(looped),
            "The edges would form a cycle through " + ", ".join(repr(k) for k in looped) + "; "
            "workflows run forward only.",
        )
        for looped in sorted(loops)
    ]


def _strongly_connected(nodes: list[str], graph: dict[str, list[str]]) -> list[list[str]]:
    """Kosaraju's algorithm, iterative (no recursion limit on long chains)."""
    finished: list[str] = []
    seen: set[str] = set()
    for start in nodes:
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, iter(graph[start]))]
        while stack:
            node, pending = stack[-1]
            nxt = next((n for n in pending if n not in seen), None)
            if nxt is None:
                stack.pop()
                finished.append(node)
            else:
                seen.add(nxt)
                stack.append((nxt, iter(graph[nxt])))
    reverse: dict[str, list[str]] = {k: [] for k in nodes}
    for node, targets in graph.items():
        for target in targets:
            reverse[target].append(node)
    assigned: set[str] = set()
    groups: list[list[str]] = []
    for start in reversed(finished):
        if start in assigned:
            continue
        assigned.add(start)
        group, todo = [start], [start]
        while todo:
            for prev in reverse[todo.pop()]:
                if prev not in assigned:
                    assigned.add(prev)
                    group.append(prev)
                    todo.append(prev)
        groups.append(group)
    return groups
