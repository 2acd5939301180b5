"""The one registry of tools: it feeds both the model's tool definitions and dispatch.

``run_tool`` is the seam everything uses (agents, tests, evals): it parses the
arguments with the tool's pydantic model, refuses mutations in read-only
mode, runs the handler on a draft, validates the whole resulting structure,
and writes to the document only if the call introduced no problem.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from tools.base import ReadOutput, ToolContext, ToolResult, ToolSpec
from tools.catalogue.installed import not_installed_notes
from tools.document import WorkflowDocument
from tools.document.redaction import redact
from tools.document.structure import Draft, RekeyEntry, Structure
from tools.document.validation import Problem, validate
from tools.edits import (
    add_edges,
    add_jobs,
    add_review_gate,
    add_rule_table,
    add_status_transition,
    attach_credential,
    call_job_code_agent,
    create_workflow,
    edit_job_code,
    inspect_job_code,
    offer_plan_mode,
    preview_change,
    remove_edges,
    remove_jobs,
    search_documentation,
    set_trigger,
    test_run,
    update_edges,
    update_jobs,
    update_workflow,
)
from tools.errors import DocumentError, PlanwrightError, UnknownToolError
from tools.schema import input_schema

TOOLS: dict[str, ToolSpec[Any]] = {
    module.TOOL.name: module.TOOL
    for module in (
        create_workflow,
        update_workflow,
        add_jobs,
        update_jobs,
        attach_credential,
        remove_jobs,
        add_edges,
        update_edges,
        remove_edges,
        set_trigger,
        add_review_gate,
        add_status_transition,
        add_rule_table,
        inspect_job_code,
        search_documentation,
        preview_change,
        offer_plan_mode,
        call_job_code_agent,
        test_run,
    )
}
MUTATING_TOOLS = frozenset(name for name, spec in TOOLS.items() if spec.mutating)
CODE_EDIT_TOOL: ToolSpec[Any] = edit_job_code.TOOL
"""The code sub-agent's tool; not offered to the planner."""

__all__ = [
    "CODE_EDIT_TOOL",
    "MUTATING_TOOLS",
    "TOOLS",
    "document_problems",
    "input_schema",
    "run_tool",
    "spec_for",
    "tool_definitions",
]


def spec_for(name: str) -> ToolSpec[Any] | None:
    """The spec of a planner tool or of the code sub-agent's tool, by the name a model used."""
    if name == CODE_EDIT_TOOL.name:
        return CODE_EDIT_TOOL
    return TOOLS.get(name)


_default_context: ToolContext | None = None
# Problems of each document's current structure, so a call only pays for one validation.
_known_problems: weakref.WeakKeyDictionary[WorkflowDocument, tuple[Structure, list[Problem]]] = (
    weakref.WeakKeyDictionary()
)


def default_context() -> ToolContext:
    global _default_context
    if _default_context is None:
        _default_context = ToolContext()
    return _default_context


def tool_definitions(*, read_only: bool = False) -> list[dict[str, Any]]:
    """Anthropic tool definitions generated from the args models (shared: do not mutate)."""
    return _tool_definitions(read_only)


@functools.cache
def _tool_definitions(read_only: bool) -> list[dict[str, Any]]:
    # A read-only session can neither change the workflow nor plan: no offer to either.
    return [
        spec.definition()
        for spec in TOOLS.values()
        if not (read_only and (spec.mutating or spec.offers))
    ]


def document_problems(doc: WorkflowDocument, ctx: ToolContext | None = None) -> list[Problem]:
    ctx = ctx or default_context()
    cached = _known_problems.get(doc)
    if cached is not None and cached[0] is doc.structure:
        return cached[1]
    problems = validate(doc.structure, ctx.catalogue)
    _known_problems[doc] = (doc.structure, problems)
    return problems


def run_tool(
    doc: WorkflowDocument,
    name: str,
    args: Mapping[str, Any] | BaseModel,
    *,
    read_only: bool = False,
    context: ToolContext | None = None,
) -> ToolResult:
    spec = TOOLS.get(name)
    if spec is None:
        return ToolResult.failure(
            "unknown_tool",
            f"There is no tool {name!r}. Tools: {', '.join(TOOLS)}.",
            mutating=False,
        )
    if read_only and spec.mutating:
        return ToolResult.failure(
            "read_only",
            f"{name} changes the workflow, and this session is read-only.",
            mutating=True,
        )
    ctx = context or default_context()
    try:
        raw = args.model_dump(exclude_unset=True) if isinstance(args, BaseModel) else dict(args)
        parsed = spec.args.model_validate(raw)
    except ValidationError as exc:
        return ToolResult.failure(
            "invalid_arguments", _describe_validation(exc), mutating=spec.mutating
        )
    except (TypeError, ValueError) as exc:
        return ToolResult.failure("invalid_arguments", str(exc), mutating=spec.mutating)
    try:
        if spec.structural:
            return _run_mutation(doc, spec, parsed, ctx)
        output: ReadOutput = _handler(spec)(doc, parsed, ctx)
    except PlanwrightError as exc:
        return ToolResult.failure(exc.code, exc.message, mutating=spec.mutating)
    return ToolResult(ok=True, message=output.text, data=output.data)


def _handler(spec: ToolSpec[Any]) -> Callable[..., Any]:
    # Every planner tool has one; only the router's and code agent's specs (never in
    # TOOLS) are schemas without a server-side handler.
    if spec.handler is None:
        raise UnknownToolError(f"{spec.name} is not run by the server.")
    return spec.handler


def _run_mutation(
    doc: WorkflowDocument, spec: ToolSpec[Any], args: BaseModel, ctx: ToolContext
) -> ToolResult:
    draft = Draft(doc.structure)
    summary: str = _handler(spec)(draft, args, ctx)
    renamed = {
        f"{op.section}.{op.old}": f"{op.section}.{op.new}"
        for op in draft.ops
        if isinstance(op, RekeyEntry)
    }
    # A problem the document already had is not the call's doing, even under a new key.
    before = {(p.code, renamed.get(p.subject, p.subject)) for p in document_problems(doc, ctx)}
    after = validate(draft.structure, ctx.catalogue)
    introduced = [p for p in after if p.blocking and (p.code, p.subject) not in before]
    if introduced:
        message = " ".join(dict.fromkeys(p.message for p in introduced))
        return ToolResult.failure(introduced[0].code, message, mutating=True)
    try:
        doc.apply(draft.ops, draft.structure)
    except DocumentError as exc:
        # The change is valid but its YAML is not acceptable (over the size limit, or
        # a shape that would not load again); apply has restored the document.
        return ToolResult.failure(exc.code, exc.message, mutating=True)
    _known_problems[doc] = (doc.structure, after)
    return ToolResult(
        ok=True,
        message=summary,
        changes=draft.changes,
        structure=redact(doc.structure),
        notes=[
            p.message
            for p in after
            if not p.blocking and not (p.once and (p.code, p.subject) in before)
        ]
        + not_installed_notes(doc.structure, draft.changes, ctx.catalogue),
        mutating=True,
    )


def _describe_validation(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:8]:
        where = ".".join(str(p) for p in err["loc"]) or "input"
        if err["type"] == "extra_forbidden":
            hint = (
                " (ids and code are managed by the server)"
                if err["loc"][-1]
                in (
                    "id",
                    "body",
                )
                else ""
            )
            parts.append(f"{where}: unknown field{hint}")
        else:
            parts.append(f"{where}: {err['msg']}")
    return "Invalid arguments: " + "; ".join(parts) + "."
