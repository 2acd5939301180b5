"""``add_status_transition``: move a record to a status only when named checks hold.

"Advance the referral to active only when coverage is verified and the documents are
attached, else on-hold" is one step that works out each named check into
``state.data.checks`` and two guarded branches off it: to the step that sets the
status when every check holds, and to the one that sets the other status when any
fails (the negation of the same expression, so exactly one runs, and neither when the
check step failed).
"""

from __future__ import annotations

import re

from pydantic import Field, model_validator

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.conditions import expression_problem, on_success_and
from tools.document.names import sanitise_name
from tools.document.refs import require_job
from tools.document.structure import Draft
from tools.edits.generated import add_coded_step, connect, js, js_string
from tools.errors import ToolInputError


class CheckSpec(ToolArgs):
    """One named precondition."""

    name: str = Field(
        min_length=1, description="The check in the user's words: 'coverage is verified'."
    )
    expression: str | None = Field(
        None,
        description="JavaScript over state, true when it holds. Left out: the flag an "
        "earlier step set, named from the words ('coverage is verified' -> "
        "state.data.coverageVerified).",
    )


class AddStatusTransitionArgs(ToolArgs):
    """Add a status transition with preconditions: after step `after`, a step works out
    each named check, then guarded branches set `status` when all hold and `otherwise`
    when any does not (neither when a step failed). For 'unless X', a check whose
    expression is X negated."""

    after: str = Field(description="Key of the step after which the transition happens.")
    subject: str = Field("record", description="What changes status, e.g. 'referral'.")
    status: str = Field(min_length=1, description="The status it advances to, e.g. 'active'.")
    otherwise: str = Field(
        min_length=1, description="The status when a check fails, e.g. 'on-hold'."
    )
    checks: list[CheckSpec] = Field(min_length=1, description="The preconditions, all needed.")

    @model_validator(mode="after")
    def _distinct(self) -> AddStatusTransitionArgs:
        if self.status.strip().lower() == self.otherwise.strip().lower():
            raise ValueError("status and otherwise must differ")
        names = [c.name.strip().lower() for c in self.checks]
        if len(set(names)) != len(names):
            raise ValueError("two checks have the same name")
        return self


def flag_name(words: str) -> str:
    """The flag a check's words name: 'the documents are attached' -> documentsAttached."""
    parts = [
        w
        for w in re.findall(r"[A-Za-z0-9]+", words)
        if w.lower()
        not in {"the", "a", "an", "is", "are", "was", "were", "has", "have", "been", "it", "they"}
    ]
    if not parts:
        return "ok"
    head, *rest = parts
    return head[0].lower() + head[1:] + "".join(w[0].upper() + w[1:] for w in rest)


def check_expression(check: CheckSpec) -> str:
    if check.expression:
        return check.expression
    return f"state.data?.{flag_name(check.name)} === true"


def checks_code(args: AddStatusTransitionArgs) -> str:
    lines = [
        f"// Preconditions for moving the {args.subject} to {js_string(args.status)}: each named",
        "// check is true or false in state.data.checks, which the branches read.",
        "fn(state => {",
        "  const checks = {",
        *(f"    {js(c.name)}: Boolean({check_expression(c)})," for c in args.checks),
        "  };",
        "  const data = { ...state.data, checks: { ...state.data?.checks, ...checks } };",
        "  return { ...state, data };",
        "});",
    ]
    return "\n".join(lines)


def status_code(subject: str, status: str) -> str:
    return (
        f"// Set the {subject}'s status to {js_string(status)}.\n"
        f"fn(state => ({{ ...state, data: {{ ...state.data, status: {js_string(status)} }} }}));"
    )


def all_checks(args: AddStatusTransitionArgs) -> str:
    """The branch condition (without the guard): every named check holds."""
    return " && ".join(f"state.data.checks[{js_string(c.name)}]" for c in args.checks)


def add_status_transition(draft: Draft, args: AddStatusTransitionArgs, ctx: ToolContext) -> str:
    after = require_job(draft.structure, args.after).key
    for check in args.checks:
        problem = expression_problem(check.expression) if check.expression else None
        if problem is not None:
            raise ToolInputError(
                f"Check {check.name!r}: {problem}.", code="invalid_condition_expression"
            )
    subject = sanitise_name(args.subject) or "record"
    checker = add_coded_step(
        draft,
        ctx,
        _name(f"Check {subject} {args.status} preconditions"),
        "common",
        checks_code(args),
    )
    advance = add_coded_step(
        draft,
        ctx,
        _name(f"Set {subject} status to {args.status}"),
        "common",
        status_code(subject, args.status),
    )
    hold = add_coded_step(
        draft,
        ctx,
        _name(f"Set {subject} status to {args.otherwise}"),
        "common",
        status_code(subject, args.otherwise),
    )
    connect(draft, ctx, after, checker, "on_job_success")
    every = all_checks(args)
    connect(
        draft,
        ctx,
        checker,
        advance,
        "js_expression",
        on_success_and(every),
        _label(f"all checks hold: {args.status}"),
    )
    connect(
        draft,
        ctx,
        checker,
        hold,
        "js_expression",
        on_success_and(f"!({every})"),
        _label(f"a check failed: {args.otherwise}"),
    )
    names = ", ".join(repr(c.name) for c in args.checks)
    jobs = draft.structure.jobs
    return (
        f"After {jobs[after].name!r}, {jobs[checker].name!r} checks {names}; when all hold "
        f"{jobs[advance].name!r} moves the {subject} to {args.status!r}, otherwise "
        f"{jobs[hold].name!r} moves it to {args.otherwise!r}."
    )


def _name(words: str) -> str:
    return sanitise_name(words)[:100].rstrip()


def _label(words: str) -> str:
    return words[:100]


TOOL = ToolSpec(
    "add_status_transition",
    AddStatusTransitionArgs,
    "structural",
    add_status_transition,
    spinner="Adding the status transition…",
    action="add the status transition",
)
