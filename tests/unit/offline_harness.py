"""Drive the offline model through one user turn, the way the agent graph does.

``run_turn`` is the single seam the offline-model tests use: router -> either the
direct job-code route or the planner loop (model -> tools -> tool_result
messages -> model ..., at most ``MAX_TOOL_CALLS`` calls) -> final text. It will
be switched to the real LangGraph graph once that lands; keep its signature.

Simplifications, until then (clearly not the graph):
- confirmation of destructive changes is auto-approved;
- ``call_job_code_agent`` runs its sub-agent inline, in call order (the graph
  runs them in parallel after the round's structure edits);
- the route and edit_job_code tool definitions below mirror DESIGN §4.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import itertools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from agents.models.base import ModelRequest, RequestContext
from agents.models.offline import OfflineModel
from tools.adaptors import split_adaptor
from tools.base import ToolContext
from tools.catalogue import load_catalogue
from tools.docs_search import DocsIndex
from tools.document import WorkflowDocument
from tools.errors import CodeEditError
from tools.job_code import CodeEdit, apply_code_edits, check_job_code, format_problems
from tools.redaction import redact
from tools.registry import run_tool, tool_definitions
from tools.structure import UpdateEntry

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
) -> TurnOutcome:
    return asyncio.run(
        _run_turn(doc, text, page, job_key, read_only, errors, [dict(h) for h in history])
    )


async def _run_turn(
    doc: WorkflowDocument,
    text: str,
    page: str,
    job_key: str | None,
    read_only: bool,
    errors: str | None,
    history: list[dict[str, str]],
) -> TurnOutcome:
    model = OfflineModel()
    ctx = _tool_context(doc, text)
    calls: list[tuple[str, dict[str, Any]]] = []

    def context() -> RequestContext:
        return RequestContext(
            user_text=text,
            structure=redact(doc.structure),
            page="job" if page == "job" else "workflow",
            job_key=job_key,
            read_only=read_only,
            errors=errors,
            history=history,
        )

    routed = await model.create(
        ModelRequest(
            role="router",
            system="",
            messages=[{"role": "user", "content": text}],
            tools=[ROUTE_TOOL],
            tool_choice={"type": "tool", "name": "route"},
            context=context(),
        )
    )
    route = routed.tool_uses[0]["input"] if routed.tool_uses else {"destination": "planner"}
    target = route.get("job_key")
    if route.get("destination") == "job_code" and target in doc.structure.jobs and not read_only:
        final = await _code_agent(model, doc, target, text, calls)
        return TurnOutcome(calls, final, doc)

    messages: list[dict[str, Any]] = [{"role": "user", "content": text}]
    tools = tool_definitions(read_only=read_only)
    while True:
        spent = len(calls) >= MAX_TOOL_CALLS
        response = await model.create(
            ModelRequest(
                role="planner",
                system="",
                messages=messages,
                tools=[] if spent else tools,
                context=context(),
            )
        )
        uses = response.tool_uses
        if not uses or spent:
            return TurnOutcome(calls, response.text, doc)
        messages.append({"role": "assistant", "content": response.content})
        results = []
        for use in uses:
            if len(calls) >= MAX_TOOL_CALLS:
                content, is_error = "Error (budget): the tool-call budget is spent.", True
            else:
                calls.append((use["name"], use["input"]))
                result = run_tool(doc, use["name"], use["input"], read_only=read_only, context=ctx)
                content, is_error = result.text, not result.ok
                if result.ok and use["name"] == "call_job_code_agent":
                    content = await _code_agent(
                        model, doc, use["input"]["job_key"], use["input"]["message"], calls
                    )
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": use["id"],
                    "content": content,
                    "is_error": is_error,
                }
            )
        messages.append({"role": "user", "content": results})


async def _code_agent(
    model: OfflineModel,
    doc: WorkflowDocument,
    key: str,
    message: str,
    calls: list[tuple[str, dict[str, Any]]],
) -> str:
    """The job-code sub-agent (minimal stand-in for the graph's node)."""
    catalogue = load_catalogue()
    messages: list[dict[str, Any]] = [{"role": "user", "content": message}]
    text = ""
    for _ in range(MAX_CODE_ATTEMPTS):
        job = doc.structure.jobs[key]
        adaptor = catalogue.get(split_adaptor(job.adaptor)[0])
        functions = [
            {"name": f.name, "params": list(f.params), "description": f.description}
            for f in (adaptor.functions if adaptor else ())
        ]
        response = await model.create(
            ModelRequest(
                role="job_code",
                system="",
                messages=messages,
                tools=[EDIT_JOB_CODE_TOOL],
                context=RequestContext(
                    user_text=message,
                    structure=redact(doc.structure),
                    page="job",
                    job_key=key,
                    job={"key": key, "name": job.name, "adaptor": job.adaptor, "body": job.body},
                    adaptor_functions=functions,
                ),
            )
        )
        text = response.text
        if not response.tool_uses:
            return text
        use = response.tool_uses[0]
        calls.append((use["name"], {"job_key": key, **use["input"]}))
        messages.append({"role": "assistant", "content": response.content})
        try:
            edits = [CodeEdit(**edit) for edit in use["input"]["edits"]]
            body = apply_code_edits(job.body or "", edits)
            problems = check_job_code(body)
            if problems:
                content, is_error = "Error: " + format_problems(problems), True
            else:
                structure = doc.structure.copy()
                structure.jobs[key] = replace(job, body=body)
                doc.apply([UpdateEntry("jobs", key, {"body": body})], structure)
                content, is_error = f"Code of {key} updated.", False
        except CodeEditError as exc:
            content, is_error = f"Error ({exc.code}): {exc.message}", True
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": use["id"],
                        "content": content,
                        "is_error": is_error,
                    }
                ],
            }
        )
    return text or "The code agent stopped without an answer."
