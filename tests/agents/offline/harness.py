"""Drive the offline model through one user turn of the real agent graph.

``run_turn`` is the single seam the offline-model tests use: the LangGraph turn
graph (router, planner loop, confirmation, parallel code sub-agents) with the
offline model in every role. Confirmations are approved, so a turn that asks
runs to the end; the tool calls the model made are recorded in order. The turn's
clock stands at ``now`` (``TURN_TIME`` unless given).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import itertools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agents.graph import build_graph
from agents.models.base import ModelRequest, ModelResponse
from agents.offline import OfflineModel
from agents.runner import TurnRunner
from agents.runtime import AgentConfig, InMemoryCommitter, TurnRuntime
from agents.state import TurnInput
from tests.agents.helpers import TURN_TIME
from tools.base import ToolContext
from tools.catalogue.adaptors import load_catalogue
from tools.catalogue.docs_search import DocsIndex
from tools.document import WorkflowDocument

MAX_TOOL_CALLS = 20
MAX_CODE_ATTEMPTS = 3

ROUTE_TOOL: dict[str, Any] = {
    "name": "route",
    "description": "Choose who handles the turn.",
    "input_schema": {
        "type": "object",
        "properties": {
            "destination": {"type": "string", "enum": ["planner", "job_code"]},
            "job_key": {"type": "string"},
            "confidence": {"type": "integer", "minimum": 1, "maximum": 5},
        },
        "required": ["destination", "confidence"],
    },
}
EDIT_JOB_CODE_TOOL: dict[str, Any] = {
    "name": "edit_job_code",
    "description": "Change the step's code with exact replacements or a full rewrite.",
    "input_schema": {
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["replace", "rewrite"]},
                        "old_code": {"type": "string"},
                        "new_code": {"type": "string"},
                    },
                    "required": ["action", "new_code"],
                },
            }
        },
        "required": ["edits"],
    },
}


@dataclass
class TurnOutcome:
    tool_calls: list[tuple[str, dict[str, Any]]]
    final_text: str
    doc: WorkflowDocument


@functools.cache
def _docs_index() -> DocsIndex:
    return DocsIndex.build(load_catalogue())


def _tool_context(doc: WorkflowDocument, text: str) -> ToolContext:
    """Ids derived from the document and the request: the same turn mints the same ids."""
    seed = hashlib.sha256((doc.to_yaml() + "\x00" + text).encode()).hexdigest()
    counter = itertools.count(1)
    return ToolContext(
        new_id=lambda: str(uuid.uuid5(uuid.NAMESPACE_URL, f"{seed}:{next(counter)}")),
        docs_loader=_docs_index,
    )


def run_turn(
    doc: WorkflowDocument,
    text: str,
    *,
    page: str = "workflow",
    job_key: str | None = None,
    read_only: bool = False,
    errors: str | None = None,
    history: Sequence[dict[str, str]] = (),
    last_run: str | None = None,
    now: datetime = TURN_TIME,
) -> TurnOutcome:
    history_copy = [dict(h) for h in history]
    return asyncio.run(
        _run_turn(doc, text, page, job_key, read_only, errors, history_copy, last_run, now)
    )


class _Recording:
    """The offline model, recording every tool call it makes (code edits with their step)."""

    name = "offline"

    def __init__(self) -> None:
        self.inner = OfflineModel()
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def create(self, request: ModelRequest, *, on_text: Any = None) -> ModelResponse:
        response = await self.inner.create(request, on_text=on_text)
        if request.role != "router":
            for use in response.tool_uses:
                args = dict(use["input"]) if isinstance(use["input"], dict) else {}
                if use["name"] == "edit_job_code":
                    args = {"job_key": request.context.job_key, **args}
                self.calls.append((use["name"], args))
        return response


async def _run_turn(
    doc: WorkflowDocument,
    text: str,
    page: str,
    job_key: str | None,
    read_only: bool,
    errors: str | None,
    history: list[dict[str, str]],
    last_run: str | None,
    now: datetime,
) -> TurnOutcome:
    """One turn through the real graph at ``now``; confirmations are approved."""
    model = _Recording()
    runtime = TurnRuntime(
        models={"router": model, "planner": model, "job_code": model},
        clock=lambda: now,
        config=AgentConfig(max_tool_calls=MAX_TOOL_CALLS),
        tools=_tool_context(doc, text),
        committer=InMemoryCommitter(),
    )
    runner = TurnRunner(build_graph(InMemorySaver()))
    turn: TurnInput = {
        "turn_id": "offline-turn",
        "user_text": text,
        "page": "job" if page == "job" else "workflow",
        "job_key": job_key,
        "read_only": read_only,
        "errors": errors,
        "history": history,
        "last_run": last_run,
        "yaml": doc.to_yaml(),
        "version": 1,
    }
    events = [event.wire() async for event in runner.start(turn, runtime)]
    while events[-1]["type"] == "confirm.required":
        events = [event.wire() async for event in runner.resume("offline-turn", True, runtime)]
    state = await runner.state("offline-turn")
    final = next((e["text"] for e in events if e["type"] == "message"), "")
    return TurnOutcome(model.calls, final, WorkflowDocument.from_yaml(state["yaml"]))
