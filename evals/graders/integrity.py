"""Integrity: ids and untouched bodies preserved; the document is (still) valid."""

from __future__ import annotations

from evals.execute import RunOutcome
from evals.graders.base import GradeResult, resolve_job
from evals.scenario import Scenario
from tools.document.structure import Structure
from tools.document.validation import Problem
from tools.registry import document_problems


def _id_problems(before: Structure, after: Structure, may_change: set[str]) -> list[str]:
    problems: list[str] = []
    after_by_id = {job.id: job for job in after.jobs.values() if job.id}
    for key, job in before.jobs.items():
        same_key = after.jobs.get(key)
        if same_key is not None and same_key.id != job.id:
            problems.append(f"step {key!r} got a new id")
        kept = after_by_id.get(job.id) if job.id else same_key
        if kept is None:
            continue  # removed: the structure graders judge removals
        if kept.body != job.body and key not in may_change and kept.key not in may_change:
            problems.append(f"the code of {kept.key!r} changed")
    for key, trigger in before.triggers.items():
        other = after.triggers.get(key)
        if other is not None and other.type == trigger.type and other.id != trigger.id:
            problems.append(f"trigger {key!r} got a new id")
    for edge in before.edges.values():
        kept_edge = after.find_edge(edge.source, edge.target_job)
        if kept_edge is not None and kept_edge.id != edge.id:
            problems.append(f"edge {edge.source} -> {edge.target_job} got a new id")
    return problems


def ids_preserved(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """Untouched entries keep their ids, and no step's code changes unless allowed."""
    if not scenario.expect.preserve:
        return None
    before, after = outcome.before_doc.structure, outcome.after_doc.structure
    may_change: set[str] = set()
    for ref in scenario.expect.body_may_change:
        for structure in (before, after):
            key = resolve_job(structure, ref)
            if key is not None:
                may_change.add(key)
    problems = _id_problems(before, after, may_change)
    checks = len(before.jobs) + len(before.triggers) + len(before.edges)
    if checks == 0:
        return None
    return GradeResult.from_problems("ids_preserved", problems, checks)


def document_valid(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """No new validation problems; with ``fix_problems``, none left at all."""
    if not scenario.expect.valid and not scenario.expect.fix_problems:
        return None
    before = {(p.code, p.subject) for p in document_problems(outcome.before_doc)}
    # A note said once by the change that brings it (a step that needs a baseUrl from a
    # credential) is about the project's credentials, which the document does not hold:
    # not a problem of the document.
    after = [p for p in document_problems(outcome.after_doc) if not p.once]
    new = [p for p in after if (p.code, p.subject) not in before]
    if scenario.expect.fix_problems:
        blocking = [p for p in after if p.blocking]
        if blocking:
            left = "; ".join(p.message for p in blocking[:4])
            fixed = len(before) - len({(p.code, p.subject) for p in blocking} & before)
            return GradeResult.fail(
                "document_valid",
                f"{len(blocking)} problem(s) left: {left}",
                round(fixed / max(len(before), 1), 3),
            )
        return GradeResult.ok("document_valid", f"fixed all {len(before)} problem(s)")
    # A step no trigger reaches any more (after a removal or retarget the user asked for)
    # is fine once the reply tells the user about that step; a silent one fails.
    told = [p for p in new if p.code == "unreachable_step" and _reply_names_step(outcome, p)]
    new = [p for p in new if p not in told]
    if new:
        return GradeResult.fail(
            "document_valid", "new problems: " + "; ".join(p.message for p in new[:4])
        )
    if told:
        return GradeResult.ok("document_valid", f"no new problems ({len(told)} note(s) told)")
    return GradeResult.ok("document_valid", "no new problems")


def _reply_names_step(outcome: RunOutcome, problem: Problem) -> bool:
    key = problem.subject.removeprefix("jobs.")
    job = outcome.after_doc.structure.jobs.get(key)
    reply = outcome.reply.lower()
    return job is not None and (key in reply or job.name.lower() in reply)
