"""Plan-mode graders on what was built: which workflows, each one valid, and that they
run (and hand off) in OpenFn's runtime.

``plan_builds``: each turn built exactly the expected keys, in order; a delta
builds only what it lists as added or changed; a rejected plan builds nothing
(no workflow created, no version committed). ``plan_workflows_valid``: every
workflow built has steps, every step has code and no blocking problem is left.
``plan_project_exports``: the final project's workflows export as one Lightning
``project.yaml`` (``tools.document.openfn.export_project``, what the service's
export serves) and import back with the same steps, code, edges and triggers.
``plan_runs_in_openfn``: every workflow of the final project runs in
``@openfn/runtime`` through :func:`evals.graders.runtime.run_document` (the
``runs_in_openfn`` grader's own test run through ``agents.testrun``), in build order,
each one a smoke run whose every HTTP call is answered 200 with its input data (a
plan scenario gives no samples of its own), each dependent started on what its
source posted, and each hand-off's source really POSTs to ``/i/<webhook_path>``
while the target's webhook is served there.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agents.testrun import RunDetail
from evals.execute import RunOutcome
from evals.graders.base import GradeResult
from evals.graders.plan import per_turn
from evals.graders.runtime import NAME as RUNTIME_NAME
from evals.graders.runtime import answer_all, run_document
from evals.plan_execute import PlanTurnOutcome
from evals.plan_scenario import PlanTurnExpect
from evals.scenario import RunExpect, Scenario
from tools.document import WorkflowDocument
from tools.document.openfn.formats import export_project, import_project
from tools.document.structure import Structure
from tools.errors import DocumentError
from tools.jobcode import has_code
from tools.plan.handoff import WEBHOOK_PREFIX, find_handoff
from tools.registry import document_problems

PLAN_RUNTIME = f"plan_{RUNTIME_NAME}"


def _builds(expect: PlanTurnExpect, done: PlanTurnOutcome) -> list[str] | None:
    rejected = bool(done.answered) and done.answered[-1] == "reject"
    delta = done.last_proposal.delta if done.last_proposal is not None else None
    approved = bool(done.answered) and done.answered[-1] == "approve"
    expected = expect.built is not None or expect.failed or expect.status is not None
    if not expected and not rejected and not (approved and delta is not None):
        return None  # nothing said about this turn's builds
    problems = []
    if expect.built is not None and done.built != expect.built:
        problems.append(f"built {done.built or 'nothing'}, expected {expect.built or 'nothing'}")
    if sorted(done.failed) != sorted(expect.failed):
        problems.append(f"failed {done.failed or 'none'}, expected {expect.failed or 'none'}")
    status = done.record.status if done.record is not None else None
    if expect.status is not None and status != expect.status:
        problems.append(f"plan status {status}, expected {expect.status}")
    if rejected:
        if done.created or done.workflow_ids or done.progress:
            problems.append(
                f"a rejected plan built something ({len(done.created)} workflow(s) created, "
                f"{len(done.workflow_ids)} version(s))"
            )
        if status != "rejected":
            problems.append(f"a rejected plan's status is {status}")
    if approved and delta is not None:
        started = {p.workflow_key for p in done.progress}
        wanted = set(delta.to_build())
        if started != wanted:
            problems.append(
                f"the delta lists {sorted(wanted)} to build, the build touched {sorted(started)}"
            )
    return problems


def _built_text(done: PlanTurnOutcome) -> str:
    failed = f", failed {', '.join(done.failed)}" if done.failed else ""
    status = done.record.status if done.record is not None else "no plan"
    return f"built {', '.join(done.built) or 'nothing'}{failed} ({status})"


def plan_builds(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """See the module docstring."""
    return per_turn("plan_builds", scenario, outcome, _builds, _built_text)


def workflow_problems(yaml: str) -> list[str]:
    """Why a built workflow is not a valid, complete one ([] when it is)."""
    doc = WorkflowDocument.from_yaml(yaml)
    jobs = doc.structure.jobs
    if not jobs:
        return ["has no steps"]
    problems = [f"step {k!r} has no code" for k, j in jobs.items() if not has_code(j.body or "")]
    problems += [p.message for p in document_problems(doc) if p.blocking]
    if not doc.structure.triggers:
        problems.append("has no trigger")
    return problems


def _valid(expect: PlanTurnExpect, done: PlanTurnOutcome) -> list[str] | None:
    built = [k for k in done.built if k not in expect.failed]
    if not built:
        return None
    problems = []
    for key in dict.fromkeys(built):
        yaml = done.yamls.get(key)
        if yaml is None:
            problems.append(f"{key} was reported built but is not in the project")
            continue
        problems += [f"{key} {p}" for p in workflow_problems(yaml)]
    return problems


def plan_workflows_valid(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """Every workflow built has steps and a trigger, code in every step, no blocking problem."""
    return per_turn("plan_workflows_valid", scenario, outcome, _valid, _built_text)


def _shape(structure: Structure) -> dict[str, Any]:
    """What a project.yaml round trip must keep of a workflow (ids are minted anew)."""
    jobs = structure.jobs
    return {
        "name": structure.name,
        "jobs": sorted((j.name, j.adaptor, (j.body or "").strip()) for j in jobs.values()),
        "edges": sorted(
            (
                e.source if e.source in structure.triggers else jobs[e.source].name,
                jobs[e.target_job].name,
                e.condition_type,
            )
            for e in structure.edges.values()
        ),
        "triggers": sorted(
            (t.type, t.cron_expression or "", t.custom_path or "")
            for t in structure.triggers.values()
        ),
    }


def plan_project_exports(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """See the module docstring."""
    final = _final(outcome)
    if scenario.plan is None or final is None or final.record is None:
        return None
    keys = [k for k in final.record.plan.order if k in final.yamls]
    if not keys:
        return None
    docs = [WorkflowDocument.from_yaml(final.yamls[k]) for k in keys]
    try:
        exported = export_project(docs, name=scenario.plan.project)
        back = import_project(exported.text, new_id=lambda: str(uuid.uuid4()))
    except DocumentError as exc:
        return GradeResult.fail("plan_project_exports", f"project.yaml: {exc.message}")
    problems = []
    if len(back.workflows) != len(docs):
        problems.append(f"{len(back.workflows)} workflow(s) came back of {len(docs)}")
    by_name = {d.structure.name: _shape(d.structure) for d in back.workflows}
    for key, doc in zip(keys, docs, strict=True):
        got = by_name.get(doc.structure.name)
        if got is None:
            problems.append(f"{key} ({doc.structure.name!r}) is not in the project.yaml")
        elif got != _shape(doc.structure):
            differs = [f for f in got if got[f] != _shape(doc.structure)[f]]
            problems.append(f"{key} came back with other {', '.join(differs)}")
    if problems:
        return GradeResult.fail("plan_project_exports", "; ".join(problems[:6]))
    return GradeResult.ok(
        "plan_project_exports", f"{len(docs)} workflow(s) in one project.yaml, round trip equal"
    )


def _final(outcome: RunOutcome) -> PlanTurnOutcome | None:
    if outcome.plan is None:
        return None
    return next((t for t in reversed(outcome.plan.turns) if t.record is not None), None)


@dataclass(frozen=True)
class Request:
    """One HTTP call a test run made: its method, URL path and JSON body."""

    method: str
    path: str
    body: Any


def _requests(details: list[RunDetail]) -> list[Request]:
    """Every call of these runs (their ``request`` events, recorded with bodies)."""
    found = []
    for detail in details:
        for event in detail.events:
            if event.get("ev") != "request":
                continue
            body = event.get("body")
            if isinstance(body, str):
                with contextlib.suppress(ValueError):  # not JSON: kept as the text it was
                    body = json.loads(body)
            url = str(event.get("url") or "")
            found.append(Request(str(event.get("method") or "GET"), urlsplit(url).path, body))
    return found


def _posted(requests: list[Request], path: str) -> Any:
    """The body of the last POST to ``/i/<path>`` (``None``: there was none)."""
    hits = [r for r in requests if r.method == "POST" and r.path == path]
    return hits[-1].body if hits else None


def plan_runs_in_openfn(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """See the module docstring. Blocks on node (~1-2 s a workflow); call it from a thread."""
    if scenario.plan is None or not scenario.plan.runs_in_openfn or outcome.error is not None:
        return None
    final = _final(outcome)
    if final is None or final.record is None:
        return None
    record = final.record
    keys = [
        k
        for k in record.plan.order
        if k in final.yamls and record.workflows[k].status in ("built", "unchanged")
    ]
    if not keys:
        return None
    posted: dict[str, list[Request]] = {}
    ran: list[str] = []
    skipped: list[str] = []
    problems: list[str] = []
    for key in keys:
        doc = WorkflowDocument.from_yaml(final.yamls[key])
        incoming = [c for c in record.contracts if c.target == key]
        data = next(
            (
                body
                for c in incoming
                if (body := _posted(posted.get(c.source, []), WEBHOOK_PREFIX + c.webhook_path))
                is not None
            ),
            None,
        )
        details: list[RunDetail] = []
        smoke = RunExpect(path=[], data={} if data is None else data, responses=answer_all(data))
        result = run_document(doc, [], smoke=smoke, details=details)
        if result.skipped:
            skipped.append(f"{key} ({result.comment})")
            continue
        ran.append(key)
        posted[key] = _requests(details)
        if not result.passed:
            problems.append(f"{key}: {result.comment}")
    for contract in record.contracts:
        if contract.source not in ran or contract.target not in keys:
            continue  # a failed end gets no hand-off (the build says so)
        path = WEBHOOK_PREFIX + contract.webhook_path
        if _posted(posted[contract.source], path) is None:
            problems.append(f"{contract.source} never posted to {path}")
        target = final.yamls.get(contract.target)
        if target is not None:
            structure = WorkflowDocument.from_yaml(target).structure
            paths = [t.custom_path for t in structure.triggers.values()]
            if contract.webhook_path not in paths:
                problems.append(f"{contract.target}'s webhook is not served at {path}")
        source = WorkflowDocument.from_yaml(final.yamls[contract.source]).structure
        if find_handoff(source, contract.webhook_path) is None:
            problems.append(f"{contract.source} has no hand-off step to {path}")
    if not ran:
        return GradeResult.skip(PLAN_RUNTIME, "not run: " + "; ".join(skipped))
    note = f" (not run: {'; '.join(skipped)})" if skipped else ""
    if problems:
        clean = len(ran) - len({p.split(":")[0] for p in problems if ":" in p})
        return GradeResult.fail(
            PLAN_RUNTIME, "; ".join(problems[:6]) + note, round(max(clean, 0) / len(ran), 3)
        )
    handed = sum(1 for c in record.contracts if c.source in ran)
    return GradeResult.ok(
        PLAN_RUNTIME,
        f"{len(ran)} workflow(s) ran in @openfn/runtime ({', '.join(ran)}); "
        f"{handed} hand-off(s) posted to their targets' webhooks{note}",
    )
