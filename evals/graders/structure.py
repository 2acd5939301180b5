"""Resulting structure: expected jobs/edges/triggers, and "equal except these paths"."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from evals.execute import RunOutcome
from evals.graders.base import GradeResult, find_edge, norm, resolve_job, resolve_node
from evals.scenario import Scenario
from tools.catalogue.names import adaptor_short_name
from tools.document.structure import Structure
from tools.jobcode import has_code


def _job_problems(scenario: Scenario, after: Structure) -> tuple[list[str], int]:
    expect = scenario.expect
    problems: list[str] = []
    checks = 0
    for job in expect.jobs:
        checks += 1
        key = resolve_job(after, job.ref)
        if key is None:
            problems.append(f"missing step {job.ref!r}")
            continue
        found = after.jobs[key]
        if job.name is not None and norm(found.name) != norm(job.name):
            problems.append(f"step {key!r} is named {found.name!r}, expected {job.name!r}")
        if job.adaptor is not None and adaptor_short_name(found.adaptor) != job.adaptor:
            problems.append(
                f"step {key!r} uses {adaptor_short_name(found.adaptor)}, expected {job.adaptor}"
            )
        if job.has_code is not None and has_code(found.body) != job.has_code:
            problems.append(f"step {key!r} {'has no' if job.has_code else 'has'} code")
    for ref in expect.jobs_absent:
        checks += 1
        key = resolve_job(after, ref)
        if key is not None:
            problems.append(f"step {ref!r} should be gone but {key!r} is still there")
    if expect.edge_count is not None and len(after.edges) != expect.edge_count:
        problems.append(f"{len(after.edges)} edges, expected {expect.edge_count}")
    if expect.job_count is not None:
        checks += 1
        if len(after.jobs) != expect.job_count:
            problems.append(f"{len(after.jobs)} steps, expected {expect.job_count}")
    if expect.workflow_name is not None:
        checks += 1
        if norm(after.name or "") != norm(expect.workflow_name):
            problems.append(f"workflow is named {after.name!r}, expected {expect.workflow_name!r}")
    return problems, checks


def _edge_problems(scenario: Scenario, after: Structure) -> tuple[list[str], int]:
    expect = scenario.expect
    problems: list[str] = []
    checks = 0
    for spec in expect.edges:
        checks += 1
        edge = find_edge(after, spec.source, spec.target)
        label = f"{spec.source} -> {spec.target}"
        if edge is None:
            problems.append(f"missing edge {label}")
            continue
        if spec.condition_type is not None and edge.condition_type != spec.condition_type:
            problems.append(
                f"edge {label} is {edge.condition_type}, expected {spec.condition_type}"
            )
        expression = (edge.condition_expression or "").replace(" ", "")
        for fragment in spec.expression_contains:
            if fragment.replace(" ", "") not in expression:
                problems.append(f"edge {label} expression lacks {fragment!r}")
        if spec.enabled is not None and edge.enabled != spec.enabled:
            problems.append(f"edge {label} enabled={edge.enabled}, expected {spec.enabled}")
    for ref in expect.edges_absent:
        checks += 1
        if find_edge(after, ref.source, ref.target) is not None:
            problems.append(f"edge {ref.source} -> {ref.target} should be gone")
    return problems, checks


def _trigger_problems(scenario: Scenario, after: Structure) -> tuple[list[str], int]:
    expect = scenario.expect
    problems: list[str] = []
    checks = 0
    if expect.trigger is not None:
        checks += 1
        spec = expect.trigger
        candidates = [t for t in after.triggers.values() if spec.type in (None, t.type)]
        if not candidates:
            problems.append(f"no {spec.type or ''} trigger".replace("  ", " "))
        else:
            trigger = candidates[0]
            if spec.enabled is not None and trigger.enabled != spec.enabled:
                problems.append(f"trigger enabled={trigger.enabled}, expected {spec.enabled}")
            if spec.cron_expression is not None and trigger.cron_expression != spec.cron_expression:
                problems.append(
                    f"cron is {trigger.cron_expression!r}, expected {spec.cron_expression!r}"
                )
            if spec.target is not None:
                target = resolve_job(after, spec.target)
                starts = [e.target_job for e in after.edges_from(trigger.key)]
                if target is None or starts != [target]:
                    problems.append(f"trigger starts {starts}, expected {spec.target!r}")
    for ref in expect.triggers_absent:
        checks += 1
        if ref in after.triggers or (ref in ("webhook", "cron") and _has_type(after, ref)):
            problems.append(f"trigger {ref!r} should be gone")
    return problems, checks


def _has_type(structure: Structure, kind: str) -> bool:
    return any(t.type == kind for t in structure.triggers.values())


def expected_structure(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """Jobs, edges (with conditions) and triggers present/absent as the scenario says."""
    after = outcome.after_doc.structure
    problems, checks = [], 0
    for part in (_job_problems, _edge_problems, _trigger_problems):
        found, count = part(scenario, after)
        problems += found
        checks += count
    if checks == 0:
        return None
    return GradeResult.from_problems("expected_structure", problems, checks)


def flatten(structure: Structure) -> dict[str, Any]:
    """``{path: value}`` for every field: ``jobs.<key>.name``, ``edges.<src>-><tgt>.id``, ..."""
    flat: dict[str, Any] = {"name": structure.name}
    for key, job in structure.jobs.items():
        for name in ("id", "name", "adaptor", "body"):
            flat[f"jobs.{key}.{name}"] = getattr(job, name)
    for key, trigger in structure.triggers.items():
        for name in trigger.order:
            flat[f"triggers.{key}.{name}"] = getattr(trigger, name)
    for edge in structure.edges.values():
        for name in edge.order:
            if name not in ("source_trigger", "source_job", "target_job"):
                flat[f"edges.{edge.source}->{edge.target_job}.{name}"] = getattr(edge, name)
    return flat


def changed_paths(before: Structure, after: Structure) -> list[str]:
    a, b = flatten(before), flatten(after)
    return sorted(p for p in a.keys() | b.keys() if a.get(p, _MISSING) != b.get(p, _MISSING))


_MISSING = object()


def equal_except(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """Everything not matched by ``equal_except`` globs is exactly as it started."""
    allowed = scenario.expect.equal_except
    if allowed is None:
        return None
    changed = changed_paths(outcome.before_doc.structure, outcome.after_doc.structure)
    stray = [p for p in changed if not any(fnmatchcase(p, pattern) for pattern in allowed)]
    if stray:
        shown = ", ".join(stray[:6]) + (f" (+{len(stray) - 6} more)" if len(stray) > 6 else "")
        return GradeResult.fail("equal_except", f"unexpected changes: {shown}")
    return GradeResult.ok("equal_except", f"{len(changed)} allowed change(s), nothing else")


__all__ = ["changed_paths", "equal_except", "expected_structure", "flatten", "resolve_node"]
