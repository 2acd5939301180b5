"""The job-code sub-agent: writes one step's code through ``edit_job_code``.

Edits are applied by the server to the current body; the result is checked
(tree-sitter syntax + OpenFn rules) and, on problems, sent back once for a
fix. Several ``edit_job_code`` calls in one reply apply in sequence, all or
none; a failed reply is answered with a ``tool_result`` for each of its
tool_uses. Nothing is written here: the caller stitches the body in by exact
key. A step that no longer exists is an error result, not an exception.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from agents.events import StatusEvent
from agents.models.base import ModelRequest, RequestContext
from agents.runtime import TurnRuntime
from tools.catalogue.adaptors import Adaptor
from tools.catalogue.names import split_adaptor
from tools.document import WorkflowDocument
from tools.document.structure import Job
from tools.edits.edit_job_code import EditJobCodeArgs
from tools.errors import CodeEditError
from tools.jobcode import (
    CodeEdit,
    apply_code_edits,
    check_job_code,
    format_problems,
    problems_error_code,
)
from tools.registry import CODE_EDIT_TOOL


@dataclass
class CodeResult:
    job_key: str
    body: str | None = None
    text: str = ""
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "job_key": self.job_key,
            "body": self.body,
            "text": self.text,
            "error": self.error,
        }


def _neighbours(doc: WorkflowDocument, job: Job) -> dict[str, Any]:
    structure = doc.structure

    def describe(key: str) -> dict[str, Any]:
        other = structure.jobs[key]
        code = (other.body or "").strip().splitlines()[:25]
        return {"key": key, "name": other.name, "adaptor": other.adaptor, "code": "\n".join(code)}

    upstream = [e.source_job for e in structure.edges_into(job.key) if e.source_job]
    downstream = [e.target_job for e in structure.edges_from(job.key)]
    return {
        "upstream": [describe(k) for k in upstream if k in structure.jobs],
        "downstream": [describe(k) for k in downstream if k in structure.jobs],
    }


def _functions(rt: TurnRuntime, adaptor: str) -> list[dict[str, Any]]:
    entry = rt.tools.catalogue.get(adaptor)
    if entry is None:
        return []
    return [
        {"name": f.name, "params": list(f.params), "description": f.description}
        for f in entry.functions
    ]


async def run_code_agent(
    rt: TurnRuntime,
    doc: WorkflowDocument,
    job_key: str,
    message: str,
    emit: Any,
    *,
    tool: str = CODE_EDIT_TOOL.name,
    tool_use_id: str | None = None,
) -> CodeResult:
    """Run the code agent on one step; returns the new body (not yet written) or why not.

    ``tool`` and ``tool_use_id`` name the call this run answers, for its status events.
    """
    job = doc.structure.jobs.get(job_key)
    if job is None:
        # The step went away after the request was accepted: report, never raise.
        return CodeResult(job_key, error=f"there is no step with key {job_key!r} any more.")
    functions = _functions(rt, job.adaptor)
    neighbours = _neighbours(doc, job)
    system = rt.prompt("job_code")
    user = rt.prompt("job_code_user").render(
        step=f"{job.key} ({job.name}), adaptor {job.adaptor}",
        adaptor_functions="\n".join(
            f"- {f['name']}({', '.join(f['params'])}): {f['description']}" for f in functions
        )
        or "(none listed)",
        neighbours=json.dumps(neighbours, indent=1),
        current_code=job.body or "",
        problems="",
        request=message,
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    context = RequestContext(
        user_text=message,
        page="job",
        job_key=job_key,
        job={"key": job.key, "name": job.name, "adaptor": job.adaptor, "body": job.body},
        adaptor_functions=functions,
        neighbours=neighbours,
        now=rt.clock(),
    )
    result = CodeResult(job_key)

    def status(phase: Literal["spinner", "settled"], text: str) -> None:
        emit(
            StatusEvent(
                phase=phase,
                tool=tool,
                text=text,
                tool_use_id=tool_use_id,
                job_key=job.key,
                job_name=job.name,
            )
        )

    status("spinner", f"Writing code for {job.name}…")
    body = job.body or ""
    max_tokens = rt.config.max_tokens
    for attempt in range(rt.config.code_retries + 1):
        response = await rt.model("job_code").create(
            ModelRequest(
                role="job_code",
                system=system.render(),
                messages=messages,
                tools=[CODE_EDIT_TOOL.definition()],
                tool_choice={"type": "auto"},
                max_tokens=max_tokens,
                context=context,
                prompt_name=system.name,
                prompt_version=system.version,
                prompt_hash=system.hash,
            )
        )
        result.text = response.text.strip()
        uses = response.tool_uses
        if response.stop_reason == "max_tokens" and uses:
            # The SDK completes a cut-off call's JSON: applying it would stitch in half
            # the code. Ask the same again with more room (never sent back: no result).
            result.error = "the code reply was cut off at the length limit"
            max_tokens = max(max_tokens, rt.config.max_tokens_retry)
            continue
        if not any(u["name"] == CODE_EDIT_TOOL.name for u in uses):
            break
        messages.append({"role": "assistant", "content": response.content})
        new_body, answers, feedback = _apply_reply(
            body, uses, rt.tools.catalogue.get(job.adaptor), split_adaptor(job.adaptor)[1]
        )
        if new_body is not None:
            result.body, result.error = new_body, None
            break
        result.error = feedback
        # The Messages API wants a tool_result for every tool_use of the reply.
        messages.append({"role": "user", "content": answers})
        if attempt == rt.config.code_retries:
            break
    if result.body is not None:
        settled = f"Wrote code for {job.name}"
    elif result.error:
        settled = f"Could not write code for {job.name}"
    else:
        settled = f"No code change for {job.name}"
    status("settled", settled)
    return result


def _apply_reply(
    body: str,
    uses: list[dict[str, Any]],
    adaptor: Adaptor | None = None,
    version: str | None = None,
) -> tuple[str | None, list[dict[str, Any]], str]:
    """Apply every ``edit_job_code`` call of one reply to ``body``, in order.

    A reply is all or nothing: its calls apply in sequence (the second to what
    the first produced) and only the final code is checked. On success returns
    ``(new_body, [], "")``. Otherwise ``(None, answers, why)``: nothing is
    applied, and ``answers`` holds one error ``tool_result`` for *every*
    tool_use of the reply, in order (the failing call says why, the others that
    they were not applied, calls to other tools that only ``edit_job_code``
    exists), as the Messages API requires for the retry. Code calling a function the
    step's ``adaptor`` lacks is refused like any other problem, its result starting
    ``Error (unknown_operation):`` so the agent picks another name.
    """
    current = body
    failed: str | None = None
    why = ""
    last_edit = ""
    for use in uses:
        if use["name"] != CODE_EDIT_TOOL.name:
            continue
        last_edit = use["id"]
        applied, why = _apply(current, use.get("input"))
        if applied is None:
            failed = use["id"]
            break
        current = applied
    if failed is None:
        problems = check_job_code(current, adaptor, version=version)
        if not problems:
            return current, [], ""
        failed = last_edit
        why = f"Error ({problems_error_code(problems)}): the code has problems:\n"
        why += format_problems(problems)
    answers: list[dict[str, Any]] = []
    for use in uses:
        if use["id"] == failed:
            text = (
                f"{why} Nothing from this reply was applied; the code is as it was. "
                f"Fix it with another {CODE_EDIT_TOOL.name} call."
            )
        elif use["name"] != CODE_EDIT_TOOL.name:
            text = (
                f"There is no tool {use['name']!r} here: only {CODE_EDIT_TOOL.name} is available."
            )
        else:
            text = (
                f"This call was not applied: the {CODE_EDIT_TOOL.name} calls of one reply apply in "
                "order, all or none, and another one failed (see its result)."
            )
        answers.append(
            {"type": "tool_result", "tool_use_id": use["id"], "content": text, "is_error": True}
        )
    return None, answers, why


def _apply(body: str, raw: Any) -> tuple[str | None, str]:
    """``(new_body, "")`` when the edits of one call apply, else ``(None, why)``.

    Not checked here: a reply's code is checked once, after all its calls.
    """
    try:
        args = EditJobCodeArgs.model_validate(raw)
        edits = [CodeEdit(e.action, e.new_code, e.old_code) for e in args.edits]
        return apply_code_edits(body, edits), ""
    except ValidationError as exc:
        return None, f"Invalid {CODE_EDIT_TOOL.name} input: {exc.errors()[0]['msg']}."
    except CodeEditError as exc:
        return None, exc.message
