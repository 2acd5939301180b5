"""Building an approved plan: each workflow in order, then the hand-offs (DESIGN §5a.3-4).

Each planned workflow is built by an ordinary run of the workflow graph on its
own document, with the whole plan as context (``plan_context``): the same
planner, tools, code sub-agents and committer as any turn, so every mutation is
a version of that workflow and a ``workflow`` event naming it. A workflow whose
build changes nothing, ends invalid or stops for a question is reported
``failed`` and the others still build. Once all are built, each contract whose
two ends were built gets its hand-off: the target's webhook path and a step at
the end of the source that posts to it (deterministic tool calls, each a
version too). Progress is stored before each ``plan.progress`` event.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from agents.events import (
    ConfirmEvent,
    Event,
    MessageEvent,
    PlanProgressEvent,
    StatusEvent,
    WorkflowEvent,
    workflow_event,
)
from agents.plan.handoffs import link, unlink
from agents.plan.requests import build_request, plan_context
from agents.plan.runtime import OpenWorkflow, PlanRuntime
from agents.plan.state import PlanState
from agents.runner import TurnRunner
from agents.runtime import Commit, commit_change
from agents.state import TurnInput
from tools.document import WorkflowDocument
from tools.edits.add_review_gate import REVIEW_CREDENTIAL
from tools.errors import PlanwrightError
from tools.jobcode import has_code
from tools.plan import (
    Contract,
    PlannedOutcome,
    PlannedWorkflow,
    PlanRecord,
    ProjectPlan,
)
from tools.plan.handoff import (
    HANDOFF_CREDENTIAL,
)
from tools.registry import document_problems

CODE_FOR_ALL = "Write code for all steps."

Emit = Callable[[Event], None]


async def build_node(state: PlanState, runtime: Runtime[PlanRuntime]) -> dict[str, Any]:
    rt, emit = runtime.context, runtime.stream_writer
    plan = ProjectPlan.model_validate(state["proposal"])
    found = [Contract.model_validate(c) for c in state.get("contracts") or []]
    record = PlanRecord.model_validate(state["record"]).model_copy(
        update={"status": "building", "request_id": None}
    )
    delta = record.delta
    wanted = set(delta.to_build()) if delta is not None else set(plan.order)
    by_key = plan.by_key()
    for key in plan.order:
        if key not in wanted:
            record.workflows[key].status = "unchanged"
    await rt.workspace.save_plan(record)
    changed = {c.key for c in delta.changed} if delta is not None else set()
    try:
        for key in plan.order:
            if key in wanted:
                await _build_one(rt, state, record, by_key[key], plan, found, emit, key in changed)
                rt.check_deadline()  # past it, the builds left are not started
        unlinked = await unlink(rt, state, record, by_key, found, emit)
        linked = await link(rt, state, record, by_key, found, emit)
    except BaseException as exc:
        # The record must not say "building" for ever, whatever ended the turn (a
        # cancel, the store or the bus going away): what was built stays built.
        why = "cancelled" if isinstance(exc, asyncio.CancelledError) else "stopped by an error"
        for outcome in record.workflows.values():
            if outcome.status in ("pending", "building"):
                outcome.status, outcome.message = "failed", f"The plan turn was {why}."
        record.status = "partial"
        with contextlib.suppress(Exception):  # the store may be what failed
            await asyncio.shield(rt.workspace.save_plan(record))
        raise
    failed = [k for k, o in record.workflows.items() if o.status == "failed"]
    record.status = "partial" if failed else "built"
    record.built_plan = plan
    await rt.workspace.save_plan(record)
    return {
        "record": record.model_dump(mode="json"),
        "final_text": _summary(plan, record, wanted, linked, found) + unlinked,
    }


async def _progress(
    rt: PlanRuntime, record: PlanRecord, key: str, outcome: PlannedOutcome, emit: Emit
) -> None:
    record.workflows[key] = outcome
    await rt.workspace.save_plan(record)  # stored before the frame: a reload shows it
    status = outcome.status
    assert status in ("building", "built", "failed")
    emit(
        PlanProgressEvent(
            workflow_key=key,
            workflow_id=outcome.workflow_id,
            status=status,
            message=outcome.message or None,
        )
    )


async def _build_one(
    rt: PlanRuntime,
    state: PlanState,
    record: PlanRecord,
    item: PlannedWorkflow,
    plan: ProjectPlan,
    found: list[Contract],
    emit: Emit,
    rebuild: bool = False,
) -> None:
    """Build one planned workflow. ``rebuild``: the approved delta changed it, so its
    steps are replaced (a version of its own first, so a revert brings them back)."""
    previous = record.workflows.get(item.key) or PlannedOutcome()
    try:
        opened = await rt.workspace.open_workflow(previous.workflow_id, item.name)
    except PlanwrightError as exc:
        await _progress(
            rt, record, item.key, PlannedOutcome(status="failed", message=exc.message), emit
        )
        return
    await _progress(
        rt,
        record,
        item.key,
        PlannedOutcome(workflow_id=opened.workflow_id, status="building"),
        emit,
    )
    try:
        async with rt.workspace.hold(opened.workflow_id):
            # Read again under the lock: another turn may have committed since it was opened.
            opened = await rt.workspace.open_workflow(opened.workflow_id, item.name)
            if rebuild:
                opened = await _cleared(state, opened, item.name, emit)
            ok, message = await _run_build(rt, state, item, plan, found, opened, emit)
    except PlanwrightError as exc:
        ok, message = False, exc.message
    status = "built" if ok else "failed"
    first = message.strip().splitlines()[0] if message.strip() else ""
    outcome = PlannedOutcome(workflow_id=opened.workflow_id, status=status, message=first[:300])
    await _progress(rt, record, item.key, outcome, emit)


async def _run_build(
    rt: PlanRuntime,
    state: PlanState,
    item: PlannedWorkflow,
    plan: ProjectPlan,
    found: list[Contract],
    opened: OpenWorkflow,
    emit: Emit,
) -> tuple[bool, str]:
    context = plan_context(plan, item, found)
    yaml, version = opened.yaml, opened.version
    ran = await _run_once(
        rt, state, opened, build_request(item, plan), context, yaml, version, emit
    )
    yaml, version, text, question = ran
    if question is None and yaml != opened.yaml:
        doc = await asyncio.to_thread(WorkflowDocument.from_yaml, yaml)
        if any(not has_code(job.body or "") for job in doc.structure.jobs.values()):
            # The build laid out the steps but left some without code: one more ordinary
            # run writes it (the code sub-agents, as for any "write the code" request).
            ran = await _run_once(rt, state, opened, CODE_FOR_ALL, context, yaml, version, emit)
            yaml, version, _, question = ran
    if question is not None:
        return False, f"The build stopped to ask: {question}"
    if yaml == opened.yaml:
        return False, text or "The build changed nothing."
    doc = await asyncio.to_thread(WorkflowDocument.from_yaml, yaml)
    blocking = [p.message for p in document_problems(doc, rt.tools) if p.blocking]
    if not doc.structure.jobs or blocking:
        return False, " ".join(blocking) or "The built workflow has no steps."
    count = len(doc.structure.jobs)
    return True, f"{count} step{'s' if count != 1 else ''}, trigger {_trigger_text(doc)}."


def _trigger_text(doc: WorkflowDocument) -> str:
    triggers = list(doc.structure.triggers.values())
    if not triggers:
        return "none"
    trigger = triggers[0]
    if trigger.type == "cron":
        return f"cron {trigger.cron_expression}"
    return str(trigger.type)


async def _run_once(
    rt: PlanRuntime,
    state: PlanState,
    opened: OpenWorkflow,
    text: str,
    context: str,
    yaml: str,
    version: int,
    emit: Emit,
) -> tuple[str, int, str, str | None]:
    """One ordinary planner run on the workflow: its yaml and version after, its reply,
    and the question it stopped on (a build never waits for an answer)."""
    turn: TurnInput = {
        "turn_id": state["turn_id"],
        "workflow_id": opened.workflow_id,
        "user_text": text,
        "page": "workflow",
        "job_key": None,
        "read_only": False,
        "errors": None,
        "history": [],
        "yaml": yaml,
        "version": version,
        "plan_context": context,
    }
    runner = TurnRunner(rt.workflow_graph, keep_finished=False)
    reply, question = "", None
    async for event in runner.start(turn, rt.build_runtime(opened.committer)):
        if isinstance(event, WorkflowEvent):
            yaml, version = event.yaml, event.version
            emit(event.model_copy(update={"workflow_id": opened.workflow_id}))
        elif isinstance(event, StatusEvent):
            emit(event)
        elif isinstance(event, MessageEvent):
            reply = event.text
        elif isinstance(event, ConfirmEvent):
            question = event.question
    if question is not None:
        await runner.forget(state["turn_id"])
    return yaml, version, reply, question


async def _cleared(state: PlanState, opened: OpenWorkflow, name: str, emit: Emit) -> OpenWorkflow:
    """The workflow emptied for its rebuild, committed as a version of its own (a revert
    to the version before brings the old steps back)."""
    yaml = WorkflowDocument.new(name=name).to_yaml()
    version = await commit_change(
        opened.committer,
        Commit(
            yaml=yaml,
            name=name,
            base_version=opened.version,
            tool="plan",
            changes=[],
            summary="Cleared for the rebuild the approved plan asked for",
            turn_id=state["turn_id"],
        ),
    )
    emit(
        workflow_event(yaml, version, [], workflow_id=opened.workflow_id, turn_id=state["turn_id"])
    )
    return OpenWorkflow(opened.workflow_id, yaml, version, opened.committer)


def _summary(
    plan: ProjectPlan,
    record: PlanRecord,
    wanted: set[str],
    linked: int,
    found: list[Contract],
) -> str:
    by_key = plan.by_key()
    built = [k for k in plan.order if k in wanted and record.workflows[k].status == "built"]
    failed = [k for k in plan.order if record.workflows[k].status == "failed"]
    parts = [f"Built {len(built)} of {len(wanted)} workflow{'s' if len(wanted) != 1 else ''}"]
    if built:
        parts[0] += ": " + ", ".join(by_key[k].name for k in built)
    text = parts[0] + "."
    if linked:
        receivers = sorted(
            {by_key[c.target].name for c in found if record.workflows[c.target].status != "failed"}
        )
        text += (
            f" Added {linked} hand-off{'s' if linked != 1 else ''} between them. Before they "
            f"work in Lightning, give the {HANDOFF_CREDENTIAL!r} credential your instance's "
            f"baseUrl and enable the webhook trigger of {', '.join(receivers)} (new triggers "
            "start disabled)."
        )
    if any(c.via == "review" for c in found):
        text += (
            f" Review steps post to the review queue: give the {REVIEW_CREDENTIAL!r} credential "
            "its baseUrl; the decision comes back to the next workflow's webhook."
        )
    for key in failed:
        text += f" {by_key[key].name} failed: {record.workflows[key].message}"
    unchanged = [k for k in plan.order if k not in wanted]
    if unchanged:
        text += " Unchanged: " + ", ".join(by_key[k].name for k in unchanged) + "."
    if record.delta is not None and record.delta.removed:
        text += (
            " No longer in the plan, left in the project as they are: "
            + ", ".join(record.delta.removed)
            + "."
        )
    return text
