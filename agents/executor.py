"""Tool execution for a planner round: confirmation, tools, code fan-out, stitching.

Structural and read tools run in order, each mutation committed (and only
then published) before the next tool runs. ``call_job_code_agent`` requests
are checked against the document those tools left and fanned out with
``Send``, all in parallel; ``collect`` stitches their code in by exact key. A
sub-agent that fails reports ``code_not_written``; the others still land.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command, Send, interrupt

from agents.events import status_event, workflow_event
from agents.job_code import CodeResult, run_code_agent
from agents.runtime import CommitError, TurnRuntime
from agents.state import CodeTask, TurnState
from agents.status import settled_text, spinner_text
from tools.base import ToolResult
from tools.document import WorkflowDocument
from tools.document.redaction import render_structure
from tools.errors import PlanwrightError
from tools.jobcode import has_code
from tools.jobcode.stitch import stitch_job_code
from tools.registry import run_tool

logger = logging.getLogger(__name__)

DECLINED = "The user declined this change, so it was not made. The workflow was not changed."


def _destructive_removals(state: TurnState, doc: WorkflowDocument) -> tuple[list[str], str] | None:
    """The round's removals, taken together, when they lose code or empty the workflow.

    Every ``remove_jobs`` call of the round counts: ``remove_jobs[a]`` and
    ``remove_jobs[b]`` remove as much as ``remove_jobs[a, b]``. Returns the
    tool_use ids of those calls and one description of what they remove, or
    ``None`` when nothing needs asking.
    """
    jobs = doc.structure.jobs
    use_ids: list[str] = []
    removed: dict[str, None] = {}  # ordered set of keys, in the order they were named
    for use in state.get("pending") or []:
        if use["name"] != "remove_jobs" or not isinstance(use.get("input"), dict):
            continue
        keys = [k for k in use["input"].get("keys") or [] if isinstance(k, str) and k in jobs]
        if keys:
            use_ids.append(use["id"])
            removed.update(dict.fromkeys(keys))
    if not removed:
        return None
    with_code = [jobs[k].name for k in removed if has_code(jobs[k].body)]
    everything = set(removed) == set(jobs)
    if not with_code and not everything:
        return None
    parts: list[str] = []
    if everything:
        parts.append(f"remove all {len(removed)} steps")
    if with_code:
        names = ", ".join(repr(n) for n in with_code)
        holds = "holds" if len(with_code) == 1 else "hold"
        parts.append(f"{'including' if everything else 'remove'} {names}, which {holds} code")
    return use_ids, ", ".join(parts)


def confirm_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    """Pause with ``interrupt`` before destructive removals; resumes with the answer."""
    if state.get("read_only"):
        return {"approvals": {}}
    doc = runtime.context.document(state["yaml"], state["version"])
    removals = _destructive_removals(state, doc)
    if removals is None:
        return {"approvals": {}}
    use_ids, description = removals
    question = f"The assistant wants to {description}. Go ahead?"
    answer = interrupt({"request_id": f"confirm-{use_ids[0]}", "question": question})
    approved = answer is True or (isinstance(answer, dict) and answer.get("approved") is True)
    return {"approvals": {use_id: approved for use_id in use_ids}}


def _tool_result_block(use_id: str, result: ToolResult, structure: str | None) -> dict[str, Any]:
    text = result.text
    if structure:
        text += f"\n\nThe workflow now:\n{structure}"
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": use_id, "content": text}
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
    # "No" covers the whole round: its other calls were planned around the change
    # the user refused (e.g. reconnecting the neighbours of a step kept after all).
    declined = any(answer is False for answer in (state.get("approvals") or {}).values())
    calls = state.get("tool_calls", 0)
    changes = list(state.get("changes") or [])
    results: dict[str, dict[str, Any]] = {}
    code_requests: list[tuple[str, dict[str, Any]]] = []
    last_mutation: str | None = None
    for use in state.get("pending") or []:
        use_id, name, args = use["id"], use["name"], use.get("input")
        if calls >= rt.config.max_tool_calls:
            results[use_id] = _error_block(use_id, "budget_spent", "The tool budget is spent.")
            continue
        calls += 1
        if declined:
            results[use_id] = _error_block(use_id, "declined", DECLINED)
            continue
        if not isinstance(args, dict):
            results[use_id] = _error_block(
                use_id, "invalid_arguments", "Tool input must be a JSON object."
            )
            continue
        if name == "call_job_code_agent":
            code_requests.append((use_id, args))  # checked once the structure is final
            continue
        emit(status_event("spinner", name, spinner_text(name, args)))
        result = run_tool(doc, name, args, read_only=read_only, context=rt.tools)
        if result.mutated:
            yaml, version = await _commit(rt, state, doc, version, name, result)
            changes += [c.as_dict() for c in result.changes]
            emit(workflow_event(yaml, version, result.changes))
            last_mutation = use_id
        emit(status_event("settled", name, settled_text(result.text)))
        results[use_id] = _tool_result_block(use_id, result, None)
    tasks: list[CodeTask] = []
    for use_id, args in code_requests:
        result = run_tool(doc, "call_job_code_agent", args, read_only=read_only, context=rt.tools)
        data = result.data or {}
        if result.ok and any(t["job_key"] == data["job_key"] for t in tasks):
            result = ToolResult.failure(
                "duplicate_request",
                f"The code agent is already working on {data['job_key']!r} in this round.",
                mutating=False,
            )
        if not result.ok:
            results[use_id] = _tool_result_block(use_id, result, None)
            continue
        tasks.append(
            CodeTask(
                tool_use_id=use_id,
                job_key=data["job_key"],
                message=data["message"],
                yaml=yaml,
                version=version,
            )
        )
    if last_mutation is not None:
        block = results[last_mutation]
        block["content"] += f"\n\nThe workflow now:\n{render_structure(doc.structure)}"
    update: dict[str, Any] = {
        "yaml": yaml,
        "version": version,
        "tool_calls": calls,
        "tool_rounds": state.get("tool_rounds", 0) + 1,
        "changes": changes,
        "round_results": results,
        "approvals": {},
        "code_results": None,
    }
    if tasks:
        return Command(goto=[Send("job_code", task) for task in tasks], update=update)
    update["messages"] = [*state["messages"], _results_message(state, results)]
    update["pending"] = []
    return Command(goto="planner", update=update)


async def _commit(
    rt: TurnRuntime,
    state: TurnState,
    doc: WorkflowDocument,
    version: int,
    tool: str,
    result: ToolResult,
) -> tuple[str, int]:
    yaml = doc.to_yaml()
    try:
        new_version = await rt.committer.commit(
            yaml=yaml,
            name=doc.name,
            base_version=version,
            tool=tool,
            changes=result.changes,
            summary=settled_text(result.text),
            turn_id=state.get("turn_id", ""),
        )
    except Exception as exc:
        rt.forget_document()
        if isinstance(exc, CommitError):
            raise
        raise CommitError(f"Could not save the change made by {tool}: {exc}") from exc
    rt.adopt(doc, new_version)
    return yaml, new_version


def _error_block(use_id: str, code: str, message: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": use_id,
        "content": f"Error ({code}): {message}",
        "is_error": True,
    }


def _results_message(state: TurnState, results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One user message with a tool_result per tool_use, in the order they were asked."""
    ordered = [results[use["id"]] for use in state.get("pending") or [] if use["id"] in results]
    return {"role": "user", "content": ordered}


async def job_code_node(task: CodeTask, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    """One sub-agent. Its failure is its own result, never the round's.

    Any exception (a ``ModelError`` after the client's retries, a bug, a lost
    connection) becomes a ``code_not_written`` result carrying the reason, so
    the planner hears about it and the other sub-agents' code is still stitched.
    """
    rt, emit = runtime.context, runtime.stream_writer
    try:
        doc = rt.document(task["yaml"], task["version"])
        result = await run_code_agent(rt, doc, task["job_key"], task["message"], emit)
    except Exception as exc:
        logger.warning("code sub-agent for %r failed", task["job_key"], exc_info=True)
        reason = exc.message if isinstance(exc, PlanwrightError) else str(exc)
        result = CodeResult(task["job_key"], error=f"the code agent failed: {reason or exc!r}")
        emit(status_event("settled", "call_job_code_agent", _failed_text(rt, task)))
    return {
        "code_results": [{"tool_use_id": task["tool_use_id"], **result.as_dict()}],
        "usage": result.usage,
    }


def _failed_text(rt: TurnRuntime, task: CodeTask) -> str:
    try:
        job = rt.document(task["yaml"], task["version"]).structure.jobs.get(task["job_key"])
    except Exception:
        job = None
    return f"Could not write code for {job.name if job else task['job_key']}"


async def collect_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    """Stitch sub-agent code into its step by exact key, committing each, then report."""
    rt, emit = runtime.context, runtime.stream_writer
    doc = rt.document(state["yaml"], state["version"])
    yaml, version = state["yaml"], state["version"]
    changes = list(state.get("changes") or [])
    results = dict(state.get("round_results") or {})
    for item in state.get("code_results") or []:
        use_id = item["tool_use_id"]
        if item["body"] is None:
            reason = item["error"] or item["text"] or "the code agent made no change"
            results[use_id] = _error_block(
                use_id, "code_not_written", f"No code was written for {item['job_key']!r}: {reason}"
            )
            continue
        stitched = stitch_job_code(doc, item["job_key"], item["body"])
        if stitched.mutated:
            yaml, version = await _commit(rt, state, doc, version, "call_job_code_agent", stitched)
            changes += [c.as_dict() for c in stitched.changes]
            emit(workflow_event(yaml, version, stitched.changes))
        note = f" The code agent said: {item['text']}" if item["text"] else ""
        results[use_id] = _tool_result_block(use_id, stitched, None)
        results[use_id]["content"] += note
    return {
        "yaml": yaml,
        "version": version,
        "changes": changes,
        "messages": [*state["messages"], _results_message(state, results)],
        "pending": [],
        "round_results": {},
        "code_results": None,
    }


async def direct_code_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    """The direct route: the code agent on the step the user is viewing."""
    rt, emit = runtime.context, runtime.stream_writer
    doc = rt.document(state["yaml"], state["version"])
    job_key = state["job_key"] or ""
    result = await run_code_agent(rt, doc, job_key, state["user_text"], emit)
    yaml, version = state["yaml"], state["version"]
    changes: list[dict[str, str]] = []
    text = result.text
    if result.body is not None:
        stitched = stitch_job_code(doc, job_key, result.body)
        if stitched.mutated:
            yaml, version = await _commit(rt, state, doc, version, "edit_job_code", stitched)
            changes = [c.as_dict() for c in stitched.changes]
            emit(workflow_event(yaml, version, stitched.changes))
        text = text or stitched.text
    elif result.error:
        text = f"I could not change the code: {result.error}"
    return {
        "yaml": yaml,
        "version": version,
        "changes": changes,
        "usage": result.usage,
        "final_text": text or "I made no change to the code.",
    }
