"""One round of the planner's tool calls: structural and read tools, then the fan-out.

Structural and read tools run in order, each mutation committed (and only
then published) before the next tool runs. Calls whose spec fans out
(``call_job_code_agent``) are checked against the document those tools left
and sent to ``job_code`` with ``Send``, all in parallel (``agents/nodes/code.py``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from agents.events import RunCompletedEvent, RunProgressEvent, StatusEvent
from agents.nodes.commit import land
from agents.review import RecordingIds, tool_recipe, with_ids
from agents.runtime import TurnRuntime
from agents.state import CodeTask, TurnState
from tools.base import ToolResult
from tools.document import WorkflowDocument
from tools.document.redaction import render_changes
from tools.document.structure import Structure
from tools.errors import PlanwrightError
from tools.registry import run_tool, spec_for
from tools.testrun import RunRequest, TestRun

DECLINED = "The user declined this change, so it was not made. The workflow was not changed."


def tool_result_block(
    use_id: str, result: ToolResult, structure: Structure | None = None, note: str = ""
) -> dict[str, Any]:
    """The tool_result for ``result``; after a mutation, with the changed entries as they
    are now in ``structure`` (the model saw the whole structure once, at the turn's start).
    """
    content = result.text + note
    if structure is not None and result.mutated:
        content += "\n\n" + render_changes(structure, result.changes)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": use_id, "content": content}
    if not result.ok:
        block["is_error"] = True
    return block


async def tools_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> Command[Any]:
    """Run one round of tool calls; fan code requests out after its structural tools.

    Structural and read tools run first, in the order they were asked, each
    mutation committed before the next. Only then are the round's
    ``call_job_code_agent`` requests checked, against the document as those
    tools left it: a request for a step added later in the round runs, one
    for a key that a later call renamed or removed gets an error result (keys
    are exact; a rename is not followed). Budget and results still follow the
    order of the tool_uses.
    """
    rt, emit = runtime.context, runtime.stream_writer
    doc = rt.document(state["yaml"], state["version"])
    yaml, version = state["yaml"], state["version"]
    read_only = bool(state.get("read_only"))
    review = bool(state.get("review"))
    draft = list(state.get("draft") or [])
    # "No" covers the whole round: its other calls were planned around the change
    # the user refused (e.g. reconnecting the neighbours of a step kept after all).
    declined = any(answer is False for answer in (state.get("approvals") or {}).values())
    calls = state.get("tool_calls", 0)
    changes = list(state.get("changes") or [])
    results: dict[str, dict[str, Any]] = {}
    offer = state.get("offer")
    code_requests: list[tuple[str, str, dict[str, Any]]] = []
    run_requests: list[tuple[str, str, dict[str, Any]]] = []
    for use in state.get("pending") or []:
        use_id, name, args = use["id"], use["name"], use.get("input")
        if calls >= rt.config.max_tool_calls:
            results[use_id] = error_block(use_id, "budget_spent", "The tool budget is spent.")
            continue
        calls += 1
        if declined:
            results[use_id] = error_block(use_id, "declined", DECLINED)
            continue
        if not isinstance(args, dict):
            results[use_id] = error_block(
                use_id, "invalid_arguments", "Tool input must be a JSON object."
            )
            continue
        spec = spec_for(name)
        if spec is not None and spec.fans_out:
            code_requests.append((use_id, name, args))  # checked once the structure is final
            continue
        if spec is not None and spec.runs_workflow:
            run_requests.append((use_id, name, args))  # runs what the round's edits left
            continue
        spinner = spec.spinner_text(args) if spec is not None else f"Running {name}…"
        emit(StatusEvent(phase="spinner", tool=name, text=spinner, tool_use_id=use_id))
        # In review mode the ids a call mints are noted, so accepting it mints the same.
        ids = RecordingIds(rt.tools.new_id)
        context = with_ids(rt.tools, ids) if review else rt.tools
        # Validation, the write and the emission are CPU work (seconds on a 2,000-step
        # document): off the event loop, so other clients' turns and sockets go on.
        result = await asyncio.to_thread(
            run_tool, doc, name, args, read_only=read_only, context=context
        )
        if result.mutated:
            recipe = tool_recipe(name, args, ids.minted)
            yaml, version, event = await land(
                rt, state, doc, version, name, result, recipe=recipe, draft=draft
            )
            changes += [c.as_dict() for c in result.changes]
            if event is not None:
                emit(event)
        emit(StatusEvent(phase="settled", tool=name, text=result.headline, tool_use_id=use_id))
        results[use_id] = tool_result_block(use_id, result, doc.structure)
        if result.ok and spec is not None and spec.offers:
            offer = spec.offers
    for use_id, name, args in run_requests:
        results[use_id] = await _test_run(rt, state, doc, yaml, version, use_id, name, args, emit)
    tasks: list[CodeTask] = []
    for use_id, name, args in code_requests:
        result = run_tool(doc, name, args, read_only=read_only, context=rt.tools)
        data = result.data or {}
        if result.ok and any(t["job_key"] == data["job_key"] for t in tasks):
            result = ToolResult.failure(
                "duplicate_request",
                f"The code agent is already working on {data['job_key']!r} in this round.",
                mutating=False,
            )
        if not result.ok:
            results[use_id] = tool_result_block(use_id, result)
            continue
        tasks.append(
            CodeTask(
                tool_use_id=use_id,
                tool=name,
                job_key=data["job_key"],
                message=data["message"],
                yaml=yaml,
                version=version,
            )
        )
    update: dict[str, Any] = {
        "yaml": yaml,
        "version": version,
        "tool_calls": calls,
        "tool_rounds": state.get("tool_rounds", 0) + 1,
        "changes": changes,
        "round_results": results,
        "approvals": {},
        "code_results": None,
        "offer": offer,
    }
    if review:
        update |= {
            "draft": draft,
            "base_yaml": state.get("base_yaml", state["yaml"]),
            "base_version": state.get("base_version", state["version"]),
        }
    if tasks:
        return Command(goto=[Send("job_code", task) for task in tasks], update=update)
    update["messages"] = [*state["messages"], results_message(state, results)]
    update["pending"] = []
    return Command(goto="planner", update=update)


async def _test_run(
    rt: TurnRuntime,
    state: TurnState,
    doc: WorkflowDocument,
    yaml: str,
    version: int,
    use_id: str,
    name: str,
    args: dict[str, Any],
    emit: Any,
) -> dict[str, Any]:
    """Run the workflow as the round left it (a review-mode draft included) for one
    ``test_run`` call, streaming its progress; the result tells the model what happened."""
    checked = run_tool(doc, name, args, context=rt.tools)
    if not checked.ok:
        return tool_result_block(use_id, checked)
    if rt.test_runs is None:
        return error_block(use_id, "runs_unavailable", "Test runs are not available here.")
    spec = spec_for(name)
    emit(
        StatusEvent(
            phase="spinner",
            tool=name,
            text=spec.spinner_text(args) if spec else "",
            tool_use_id=use_id,
        )
    )
    data = checked.data or {}
    request = RunRequest.model_validate(
        {k: v for k, v in data.items() if v is not None and k in ("input", "responses")}
    )

    async def progress(event: RunProgressEvent) -> None:
        emit(event)

    try:
        run = await rt.test_runs.run(
            yaml=yaml,
            version=state.get("base_version", version) if state.get("review") else version,
            draft=bool(state.get("review")),
            request=request,
            turn_id=state.get("turn_id", ""),
            on_progress=progress,
        )
    except PlanwrightError as exc:
        emit(
            StatusEvent(
                phase="settled", tool=name, text="The test run could not start", tool_use_id=use_id
            )
        )
        return error_block(use_id, exc.code, exc.message)

    emit(RunCompletedEvent(run=run))
    emit(
        StatusEvent(phase="settled", tool=name, text=run.summary or run.status, tool_use_id=use_id)
    )
    return {"type": "tool_result", "tool_use_id": use_id, "content": run_result_text(run)}


def run_result_text(run: TestRun) -> str:
    """A test run for the model: the summary, then the failed step's error and input."""
    text = f"Test run {run.run_id}: {run.status}. {run.summary}".strip()
    failed = run.failed_step
    if failed is not None:
        text += f"\nFailed step: {failed.name} ({failed.key}): {failed.error}"
    for item in run.unsupported:
        text += f"\nCannot run here: {item.key}: {item.reason}"
    unmatched = [r for r in run.requests if not r.matched]
    for request in unmatched[:5]:
        text += f"\nNo sample answered {request.method} {request.url}"
    if run.error:
        text += f"\nError: {run.error}"
    return text


def error_block(use_id: str, code: str, message: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": use_id,
        "content": f"Error ({code}): {message}",
        "is_error": True,
    }


def results_message(state: TurnState, results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One user message with a tool_result per tool_use, in the order they were asked."""
    ordered = [results[use["id"]] for use in state.get("pending") or [] if use["id"] in results]
    return {"role": "user", "content": ordered}
