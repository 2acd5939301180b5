"""The code sub-agents of a round (fanned out with ``Send``), their stitching, and the
direct route to the code agent.

A sub-agent that fails reports ``code_not_written``; the others still land.
``collect`` stitches their code in by exact key, committing each.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from langgraph.runtime import Runtime

from agents.events import StatusEvent
from agents.nodes.code_agent import CodeResult, run_code_agent
from agents.nodes.commit import land
from agents.nodes.tools_round import error_block, results_message, tool_result_block
from agents.review import code_recipe
from agents.runtime import TurnRuntime
from agents.state import CodeTask, TurnState
from tools.errors import PlanwrightError
from tools.jobcode.stitch import stitch_job_code
from tools.registry import CODE_EDIT_TOOL

logger = logging.getLogger(__name__)


async def job_code_node(task: CodeTask, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    """One sub-agent. Its failure is its own result, never the round's.

    Any exception (a ``ModelError`` after the client's retries, a bug, a lost
    connection) becomes a ``code_not_written`` result carrying the reason, so
    the planner hears about it and the other sub-agents' code is still stitched.
    """
    rt, emit = runtime.context, runtime.stream_writer
    try:
        doc = rt.document(task["yaml"], task["version"])
        result = await run_code_agent(
            rt,
            doc,
            task["job_key"],
            task["message"],
            emit,
            tool=task["tool"],
            tool_use_id=task["tool_use_id"],
        )
    except Exception as exc:
        logger.warning("code sub-agent for %r failed", task["job_key"], exc_info=True)
        reason = exc.message if isinstance(exc, PlanwrightError) else str(exc)
        result = CodeResult(task["job_key"], error=f"the code agent failed: {reason or exc!r}")
        name = _job_name(rt, task)
        emit(
            StatusEvent(
                phase="settled",
                tool=task["tool"],
                text=f"Could not write code for {name or task['job_key']}",
                tool_use_id=task["tool_use_id"],
                job_key=task["job_key"],
                job_name=name,
            )
        )
    return {
        "code_results": [
            {"tool_use_id": task["tool_use_id"], "tool": task["tool"], **result.as_dict()}
        ],
    }


def _job_name(rt: TurnRuntime, task: CodeTask) -> str | None:
    try:
        job = rt.document(task["yaml"], task["version"]).structure.jobs.get(task["job_key"])
    except Exception:
        job = None
    return job.name if job else None


async def collect_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    """Stitch sub-agent code into its step by exact key, committing each, then report."""
    rt, emit = runtime.context, runtime.stream_writer
    doc = rt.document(state["yaml"], state["version"])
    yaml, version = state["yaml"], state["version"]
    changes = list(state.get("changes") or [])
    draft = list(state.get("draft") or [])
    results = dict(state.get("round_results") or {})
    for item in state.get("code_results") or []:
        use_id = item["tool_use_id"]
        if item["body"] is None:
            reason = item["error"] or item["text"] or "the code agent made no change"
            results[use_id] = error_block(
                use_id, "code_not_written", f"No code was written for {item['job_key']!r}: {reason}"
            )
            continue
        job = doc.structure.jobs.get(item["job_key"])
        old_body = job.body if job is not None else ""
        stitched = stitch_job_code(doc, item["job_key"], item["body"], catalogue=rt.tools.catalogue)
        if stitched.mutated:
            recipe = code_recipe(item["tool"], item["job_key"], item["body"], old_body or "")
            yaml, version, event = await land(
                rt, state, doc, version, item["tool"], stitched, recipe=recipe, draft=draft
            )
            changes += [c.as_dict() for c in stitched.changes]
            if event is not None:
                emit(event)
        if item["text"]:  # said with what was done, before the result's notes
            said = f"{stitched.message} The code agent said: {item['text']}"
            stitched = dataclasses.replace(stitched, message=said)
        results[use_id] = tool_result_block(use_id, stitched, doc.structure)
    return {
        "yaml": yaml,
        "version": version,
        "changes": changes,
        "messages": [*state["messages"], results_message(state, results)],
        "pending": [],
        "round_results": {},
        "code_results": None,
        **_draft_update(state, draft),
    }


def _draft_update(state: TurnState, draft: list[dict[str, Any]]) -> dict[str, Any]:
    """In review mode: the draft so far and the base it started from."""
    if not state.get("review"):
        return {}
    return {
        "draft": draft,
        "base_yaml": state.get("base_yaml", state["yaml"]),
        "base_version": state.get("base_version", state["version"]),
    }


async def direct_code_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    """The direct route: the code agent on the step the user is viewing."""
    rt, emit = runtime.context, runtime.stream_writer
    doc = rt.document(state["yaml"], state["version"])
    job_key = state["job_key"] or ""
    result = await run_code_agent(rt, doc, job_key, state["user_text"], emit)
    yaml, version = state["yaml"], state["version"]
    changes: list[dict[str, str]] = []
    draft = list(state.get("draft") or [])
    text = result.text
    if result.body is not None:
        job = doc.structure.jobs.get(job_key)
        old_body = (job.body if job is not None else "") or ""
        stitched = stitch_job_code(doc, job_key, result.body, catalogue=rt.tools.catalogue)
        if stitched.mutated:
            tool = CODE_EDIT_TOOL.name
            recipe = code_recipe(tool, job_key, result.body, old_body)
            yaml, version, event = await land(
                rt, state, doc, version, tool, stitched, recipe=recipe, draft=draft
            )
            changes = [c.as_dict() for c in stitched.changes]
            if event is not None:
                emit(event)
        text = text or stitched.text
    elif result.error:
        text = f"I could not change the code: {result.error}"
    return {
        "yaml": yaml,
        "version": version,
        "changes": changes,
        "final_text": text or "I made no change to the code.",
        **_draft_update(state, draft),
    }
