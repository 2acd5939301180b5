"""From ``run.mjs``'s events to a :class:`tools.testrun.TestRun` (pure: no I/O).

``run.mjs`` speaks OpenFn's step ids (``slugify(name)``, a trigger's type); a
:class:`RunPlan` maps them back to Planwright's job keys and names, and lists the
plan's edges so the report can say which fired: a job's edge fired when the
runtime's ``job-complete``/``job-error`` ``next`` named its target; the trigger's
when its target started without a finished step having asked for it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.testrun.secrets import mask
from tools.document import WorkflowDocument
from tools.document.openfn import to_cli_workflow
from tools.document.openfn.context import document_step_ids
from tools.testrun import (
    EdgeRun,
    RequestRecord,
    RunStatus,
    StandIn,
    StepRun,
    TestRun,
    UnsupportedStep,
)


@dataclass(frozen=True)
class PlanEdge:
    """One edge of the plan, by Planwright keys and OpenFn step ids."""

    source: str
    target: str
    source_id: str
    target_id: str
    from_trigger: bool
    js: bool
    """A ``js_expression`` edge (a decision the summary tells)."""
    label: str | None = None


@dataclass(frozen=True)
class RunPlan:
    """A CLI workflow to run and how its step ids map back to Planwright."""

    cli: dict[str, Any]
    key_of: dict[str, str]
    """OpenFn step id -> job or trigger key."""
    names: dict[str, str]
    """Job key -> display name."""
    jobs: tuple[str, ...]
    """Every job key, in document order."""
    edges: tuple[PlanEdge, ...] = ()
    start: str | None = None
    """The OpenFn id of the step the runtime starts from (the first trigger)."""

    def key(self, step_id: str | None) -> str | None:
        if step_id is None:
            return None
        return self.key_of.get(step_id, step_id)

    def name(self, key: str) -> str:
        return self.names.get(key, key)


def plan_from_document(doc: WorkflowDocument) -> RunPlan:
    """The document's ``cli`` export and its id map (raises ``DocumentError`` like the export)."""
    cli = to_cli_workflow(doc)
    structure = doc.structure
    ids = document_step_ids(doc)
    key_of = {v: k for k, v in ids.triggers.items()} | {v: k for k, v in ids.jobs.items()}
    edges = []
    for edge in structure.edges.values():
        from_trigger = edge.source_trigger is not None
        source = str(edge.source_trigger if from_trigger else edge.source_job)
        target = str(edge.target_job)
        edges.append(
            PlanEdge(
                source=source,
                target=target,
                source_id=ids.node(source),
                target_id=ids.jobs[target],
                from_trigger=from_trigger,
                js=edge.condition_type == "js_expression",
                label=edge.condition_label,
            )
        )
    return RunPlan(
        cli=cli,
        key_of=key_of,
        names={k: j.name or k for k, j in structure.jobs.items()},
        jobs=tuple(structure.jobs),
        edges=tuple(edges),
        start=cli.get("start"),
    )


def plan_from_cli(cli: Mapping[str, Any]) -> RunPlan:
    """A CLI ``workflow.json`` (or ``{workflow, options}``) as is: keys are its step ids."""
    workflow = cli.get("workflow", cli) if isinstance(cli.get("workflow"), Mapping) else cli
    steps = [s for s in workflow.get("steps") or [] if isinstance(s, Mapping)]
    jobs = tuple(str(s["id"]) for s in steps if isinstance(s.get("expression"), str))
    triggers = {str(s["id"]) for s in steps if not isinstance(s.get("expression"), str)}
    edges = []
    for s in steps:
        for target, rule in (s.get("next") or {}).items():
            rule = rule if isinstance(rule, Mapping) else {}
            condition = rule.get("condition")
            edges.append(
                PlanEdge(
                    source=str(s["id"]),
                    target=str(target),
                    source_id=str(s["id"]),
                    target_id=str(target),
                    from_trigger=str(s["id"]) in triggers,
                    js=isinstance(condition, str)
                    and condition not in ("always", "on_job_success", "on_job_failure"),
                    label=rule.get("label"),
                )
            )
    names = {str(s["id"]): str(s.get("name") or s["id"]) for s in steps if str(s["id"]) in jobs}
    start = workflow.get("start")
    if start is None and steps:
        start = str(steps[0]["id"])
    return RunPlan(
        cli=dict(cli),
        key_of={str(s["id"]): str(s["id"]) for s in steps},
        names=names,
        jobs=jobs,
        edges=tuple(edges),
        start=start,
    )


# --- the report --------------------------------------------------------------------


@dataclass
class Outcome:
    """What happened to the node process, besides its events."""

    killed_for: str | None = None
    """``timeout`` or ``output`` when the runner killed it."""
    exit_code: int | None = None
    stderr: str = ""
    timeout_s: float = 0.0
    total_bytes: int = 0
    memory_mb: int = 0
    duration_ms: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _oom(outcome: Outcome) -> bool:
    return "heap out of memory" in outcome.stderr or "Allocation failed" in outcome.stderr


def build_run(
    run_id: str,
    plan: RunPlan,
    events: list[dict[str, Any]],
    outcome: Outcome,
    *,
    secrets: Iterable[str] = (),
    workflow_id: str | None = None,
    version: int | None = None,
) -> TestRun:
    """The :class:`TestRun` for ``events`` (in the order node wrote them)."""
    steps: list[StepRun] = []
    requests: list[RequestRecord] = []
    unsupported: list[UnsupportedStep] = []
    runtime: dict[str, str] = {}
    stand_ins: list[StandIn] = []
    nexts: dict[str, set[str]] = {}
    owed: Counter[str] = Counter()
    from_trigger: set[str] = set()
    running: dict[str, Any] | None = None
    done: dict[str, Any] | None = None
    for event in events:
        kind = event.get("ev")
        if kind == "plan":
            runtime = {str(k): str(v) for k, v in (event.get("runtime") or {}).items()}
            stand_ins = _stand_ins(plan, event.get("adaptors") or {})
        elif kind == "unsupported":
            unsupported = [
                UnsupportedStep(key=plan.key(str(s["id"])) or str(s["id"]), reason=str(s["reason"]))
                for s in event.get("steps") or []
            ]
        elif kind == "step-start":
            step_id = str(event["id"])
            if owed[step_id] > 0:
                owed[step_id] -= 1
            else:
                from_trigger.add(step_id)
            running = event
        elif kind == "step-end":
            step_id = str(event["id"])
            key = plan.key(step_id) or step_id
            nexts.setdefault(step_id, set()).update(str(n) for n in event.get("next") or [])
            owed.update(str(n) for n in event.get("next") or [])
            steps.append(
                StepRun(
                    key=key,
                    name=plan.name(key),
                    status="failed" if event.get("status") == "failed" else "succeeded",
                    duration_ms=int(event.get("duration_ms") or 0),
                    input=event.get("input"),
                    output=event.get("output"),
                    error=event.get("error"),
                    logs=[str(line) for line in event.get("logs") or []],
                    truncated=bool(event.get("truncated")),
                )
            )
            running = None
        elif kind == "request":
            requests.append(
                RequestRecord(
                    step_key=plan.key(event.get("step")),
                    method=str(event.get("method") or "GET"),
                    url=str(event.get("url") or ""),
                    status=event.get("status"),
                    matched=bool(event.get("matched")),
                )
            )
        elif kind == "violation" and event.get("what") in ("connection to", "DNS lookup of"):
            host, port = event.get("host"), event.get("port")
            requests.append(
                RequestRecord(
                    step_key=plan.key(event.get("step")),
                    method="CONNECT" if event.get("what") == "connection to" else "LOOKUP",
                    url=f"tcp://{host}:{port}" if port is not None else f"dns://{host}",
                    status=None,
                    matched=False,
                )
            )
        elif kind == "done":
            done = event

    error: str | None = None
    status: RunStatus
    if running is not None:  # killed or crashed inside a step
        key = plan.key(str(running["id"])) or str(running["id"])
        if outcome.killed_for == "timeout" or (done or {}).get("status") == "timed_out":
            why = f"stopped: the run took longer than {outcome.timeout_s:g} s"
        elif outcome.killed_for == "output":
            why = f"stopped: the run's output passed {outcome.total_bytes} bytes"
        elif _oom(outcome):
            why = f"stopped: out of memory (limit {outcome.memory_mb} MB)"
        else:
            why = "stopped: the runtime ended during this step"
        steps.append(
            StepRun(key=key, name=plan.name(key), status="failed", duration_ms=0, error=why)
        )
    done_status = (done or {}).get("status")
    if outcome.killed_for == "timeout" or done_status == "timed_out":
        status = "timed_out"
        error = f"The run took longer than {outcome.timeout_s:g} s and was stopped."
    elif outcome.killed_for == "output":
        status = "failed"
        error = f"The run's output passed the {outcome.total_bytes}-byte limit and was stopped."
    elif done_status == "unsupported":
        status = "unsupported"
        error = "Some steps cannot run in this runtime: " + "; ".join(
            f"'{plan.name(u.key)}': {u.reason}" for u in unsupported
        )
    elif done is None:
        status = "failed"
        if _oom(outcome):
            error = f"The run ran out of memory (limit {outcome.memory_mb} MB)."
        else:
            tail = "\n".join(outcome.stderr.strip().splitlines()[-5:])
            error = (
                f"The runtime stopped without finishing (exit {outcome.exit_code}). {tail}".strip()
            )
    elif done_status == "ran":
        status = "failed" if any(s.status == "failed" for s in steps) else "succeeded"
    else:  # invalid, crashed
        status = "failed"
        error = str(done.get("error") or "the runtime could not run the workflow")

    edges = []
    started = {plan.key_of.get(s, s) for s in from_trigger}
    for edge in plan.edges:
        if edge.from_trigger:
            fired = edge.source_id == plan.start and edge.target in started
        else:
            fired = edge.target_id in nexts.get(edge.source_id, set())
        edges.append(EdgeRun(source=edge.source, target=edge.target, fired=fired))

    run = TestRun(
        run_id=run_id,
        workflow_id=workflow_id,
        version=version,
        status=status,
        steps=steps,
        edges=edges,
        requests=requests,
        unsupported=unsupported,
        final_state=(done or {}).get("final"),
        error=error,
        duration_ms=outcome.duration_ms,
        runtime=runtime,
        stand_ins=stand_ins,
    )
    run.summary = summarise(run, plan)
    secrets = list(secrets)
    if secrets:
        run = TestRun.model_validate(mask(run.model_dump(mode="json"), secrets))
    return run


def _stand_ins(plan: RunPlan, adaptors: Mapping[str, Any]) -> list[StandIn]:
    """Pins that ran as another installed version (the plan event's ``requested``/``ran``)."""
    found = []
    for step_id, used in adaptors.items():
        for adaptor in used if isinstance(used, list) else ():
            pinned, ran = adaptor.get("requested"), adaptor.get("ran")
            if pinned and ran and pinned not in ("latest", ran):
                key = plan.key(str(step_id)) or str(step_id)
                found.append(
                    StandIn(key=key, adaptor=str(adaptor["name"]), pinned=str(pinned), ran=str(ran))
                )
    return found


def summarise(run: TestRun, plan: RunPlan) -> str:
    """The run in plain words (for people; never parsed)."""
    if run.status == "unsupported":
        return (
            f"Could not run it here: {len(run.unsupported)} step(s) cannot load in OpenFn's "
            "runtime: "
            + "; ".join(f"'{plan.name(u.key)}' ({u.reason})" for u in run.unsupported)
            + "."
        )
    ran = []
    for step in run.steps:
        if step.key not in ran:
            ran.append(step.key)
    parts = [
        f"Ran {len(ran)} of {len(plan.jobs)} steps"
        + (": " + " → ".join(f"'{plan.name(k)}'" for k in ran) if ran else "")
    ]
    by_pair = {(e.source, e.target): e for e in plan.edges}
    for fired in run.edges:
        edge = by_pair.get((fired.source, fired.target))
        if fired.fired and edge is not None and edge.js:
            what = f"the '{edge.label}' branch" if edge.label else "the branch"
            parts.append(f"took {what} to '{plan.name(edge.target)}'")
    unmatched = [r for r in run.requests if not r.matched]
    for step in run.steps:
        if step.status == "failed":
            parts.append(f"'{step.name}' failed: {step.error}")
    if unmatched:
        shown = ", ".join(f"{r.method} {r.url}" for r in unmatched[:3])
        more = f" and {len(unmatched) - 3} more" if len(unmatched) > 3 else ""
        parts.append(f"no sample answered {shown}{more}")
    if run.status == "timed_out":
        parts.append(run.error or "it timed out")
    elif run.status == "failed" and run.error:
        parts.append(run.error)
    elif run.status == "succeeded":
        parts.append("every step succeeded")
    for stand_in in run.stand_ins:
        parts.append(
            f"'{plan.name(stand_in.key)}' pins {stand_in.adaptor}@{stand_in.pinned}, which is not "
            f"installed here: it ran with {stand_in.ran}"
        )
    return "; ".join(parts) + f" ({run.duration_ms} ms)."
