"""The hand-offs of a built plan (DESIGN §5a.4): each contract's deterministic tool calls
(``tools.plan.handoff``) applied to its two workflows, and the hand-offs a changed plan
no longer has taken away.

Calls on one workflow hold together or not at all: they are run on a parsed copy,
and only when every one succeeded is each mutation committed as a version of its
own (and emitted as a ``workflow`` event naming the workflow).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable

from agents.events import Event, workflow_event
from agents.plan.runtime import PlanRuntime
from agents.plan.state import PlanState
from agents.runtime import Commit, CommitError, commit_change
from tools.base import ToolResult
from tools.document import WorkflowDocument
from tools.document.structure import Structure
from tools.errors import PlanwrightError
from tools.plan import Contract, PlannedWorkflow, PlanRecord, contracts
from tools.plan.handoff import ToolCall, handoff_calls, handoff_path, receiving_calls, run_call
from tools.plan.review_gate import raise_calls, resume_calls, review_steps

Emit = Callable[[Event], None]


async def unlink(
    rt: PlanRuntime,
    state: PlanState,
    record: PlanRecord,
    by_key: dict[str, PlannedWorkflow],
    found: list[Contract],
    emit: Emit,
) -> str:
    """Remove the hand-off steps of contracts the built plan had and this one drops (a
    removed workflow, a dependency taken away), so no step posts to a workflow the plan no
    longer feeds. Returns what to tell the user."""
    if record.built_plan is None:
        return ""
    slug = str(state.get("project", {}).get("slug") or "")
    # A contract is stale when its path or its kind went (a hand-off that became a review
    # gate leaves its hand-off step behind otherwise).
    stale: set[tuple[str, str]] = {
        (c.webhook_path, c.via) for c in contracts(record.built_plan, slug)
    }
    stale -= {(c.webhook_path, c.via) for c in found}
    if not stale:
        return ""
    remove = functools.partial(_stale_handoffs, paths=stale)
    removed: list[str] = []
    for key, outcome in record.workflows.items():
        if not outcome.workflow_id or outcome.status == "failed":
            continue
        if await _apply(rt, state, outcome.workflow_id, by_key[key].name, emit, remove):
            removed.append(by_key[key].name)
    if not removed:
        return ""
    return " Removed the hand-offs the plan no longer has from " + ", ".join(removed) + "."


def _stale_handoffs(structure: Structure, *, paths: set[tuple[str, str]]) -> list[ToolCall]:
    posts = {path for path, via in paths if via == "webhook"}
    reviews = {path for path, via in paths if via == "review"}
    keys = [k for k, job in structure.jobs.items() if handoff_path(job) in posts]
    keys += [k for path in sorted(reviews) for k in review_steps(structure, path)]
    return [("remove_jobs", {"keys": keys})] if keys else []


async def link(
    rt: PlanRuntime,
    state: PlanState,
    record: PlanRecord,
    by_key: dict[str, PlannedWorkflow],
    found: list[Contract],
    emit: Emit,
) -> int:
    """Add each contract's hand-off whose two ends exist and were not left failed."""
    linked = 0
    for contract in found:
        source, target = (
            record.workflows.get(contract.source),
            record.workflows.get(contract.target),
        )
        if source is None or target is None or not source.workflow_id or not target.workflow_id:
            continue
        if "failed" in (source.status, target.status):
            continue
        target_name = by_key[contract.target].name
        receive = functools.partial(receiving_calls, contract=contract)
        hand_off = functools.partial(handoff_calls, contract=contract, target_name=target_name)
        if contract.via == "review":  # the source raises the review; the target starts on it
            receive = functools.partial(resume_calls, contract=contract)
            hand_off = functools.partial(raise_calls, contract=contract)
        ok = await _apply(rt, state, target.workflow_id, target_name, emit, receive) is not None
        if ok:
            source_name = by_key[contract.source].name
            ok = (
                await _apply(rt, state, source.workflow_id, source_name, emit, hand_off) is not None
            )
        if ok:
            linked += 1
        else:
            source.status = "failed"
            source.message = f"Could not add the hand-off to {target_name}."
    return linked


async def _apply(
    rt: PlanRuntime,
    state: PlanState,
    workflow_id: str,
    name: str,
    emit: Emit,
    calls_for: Callable[[Structure], list[ToolCall]],
) -> int | None:
    """Run deterministic tool calls on a workflow. All of them hold or none is kept;
    then each mutation is committed as a version of its own. Returns how many versions
    were committed, or ``None`` when a call (or a commit) failed."""
    async with rt.workspace.hold(workflow_id):
        opened = await rt.workspace.open_workflow(workflow_id, name)
        doc = await asyncio.to_thread(WorkflowDocument.from_yaml, opened.yaml)
        try:
            calls = calls_for(doc.structure)
        except PlanwrightError:
            return None
        steps: list[tuple[str, str, ToolResult]] = []
        for call in calls:
            result = run_call(doc, call, context=rt.tools)
            if not result.ok:
                return None
            if result.mutated:
                steps.append((call[0], doc.to_yaml(), result))
        version, turn_id = opened.version, state["turn_id"]
        for tool, yaml, result in steps:
            change = Commit.of_tool(
                tool, result, yaml=yaml, name=doc.name, base_version=version, turn_id=turn_id
            )
            try:
                version = await commit_change(opened.committer, change)
            except CommitError:  # the versions before it stand; the hand-off is reported failed
                return None
            emit(
                workflow_event(
                    yaml, version, result.changes, workflow_id=workflow_id, turn_id=turn_id
                )
            )
    return len(steps)
