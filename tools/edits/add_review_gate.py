"""``add_review_gate``: a human review (approval, sign-off, escalation) as OpenFn runs it.

OpenFn cannot pause a run and wait for a person, so a gate is two parts, each in the
workflow where it runs:

* ``raise``: in the workflow where the review happens, a step after ``after`` posts
  the case to the review queue (language-http, credential :data:`REVIEW_CREDENTIAL`,
  whose ``baseUrl`` is the queue) with the reviewer, and the webhook the decision
  must come back to. The run ends there: the steps that must wait for the decision
  belong to the resume part.
* ``resume``: in the decision workflow (its own workflow in the project), the
  trigger becomes the webhook at ``resume_path``, and a step reads the decision
  against the payload contract (:data:`DECISIONS`: ``{decision, case, corrected?}``)
  and one guarded branch per decision leaves it.

An escalation ("if coverage is not active, escalate to the supervisor") is the
raise part on a guarded condition (``when``), beside the step's other branches.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.conditions import on_success_and
from tools.document.names import is_valid_key, sanitise_name
from tools.document.refs import require_job
from tools.document.structure import Change, Draft, UpdateEntry
from tools.edits.generated import add_coded_step, connect, js, js_string, main_successors
from tools.edits.primitives import set_trigger, update_edge
from tools.edits.specs import EdgeFields, TriggerSpec
from tools.errors import ToolInputError

REVIEW_CREDENTIAL = "review-queue"
"""The Lightning credential the raise step runs with: ``{"baseUrl": <review queue URL>}``."""
DECISIONS = ("approved", "rejected", "corrected")
"""The decision payload's ``decision`` values; ``corrected`` carries ``corrected: {...}``."""
WEBHOOK_PREFIX = "/i/"


class AddReviewGateArgs(ToolArgs):
    """Add a human review gate (review, approval, sign-off, escalation) in two parts, as
    a run cannot pause. 'raise': after `after`, a step posts the case to the review queue
    (credential 'review-queue') and the run ends, so `after` has no other on-success step
    unless it is an escalation (`when`, `on_failure`). 'resume': in the decision
    workflow, the webhook at `resume_path` starts a step reading the decision
    (approved, rejected, corrected) with guarded branches to `on_approved`,
    `on_rejected` and `on_corrected`; those steps must exist first."""

    part: Literal["raise", "resume"] = Field(
        description="'raise' where the review happens; 'resume' in the workflow that "
        "continues on the decision."
    )
    reviewer: str = Field(description="Who reviews, in the user's words: 'coordinator'.")
    subject: str = Field(description="What is reviewed, e.g. 'referral'.")
    resume_path: str = Field(
        description="Webhook path of the decision (letters, digits, '-', '_'), the same in "
        "both parts."
    )
    after: str | None = Field(None, description="raise: key of the step whose result is reviewed.")
    when: str | None = Field(
        None,
        description="raise: escalate only when this JavaScript check over state holds "
        "(the success guard is added).",
    )
    on_failure: bool = Field(False, description="raise: escalate when `after` fails.")
    on_approved: str | None = Field(None, description="resume: key of the step run on approval.")
    on_rejected: str | None = Field(None, description="resume: key of the step run on rejection.")
    on_corrected: str | None = Field(
        None,
        description="resume: key of the step a corrected case goes to (default on_approved).",
    )

    @model_validator(mode="after")
    def _parts(self) -> AddReviewGateArgs:
        if not is_valid_key(self.resume_path):
            raise ValueError("resume_path must be letters, digits, '-' and '_'")
        if self.part == "raise" and not self.after:
            raise ValueError("part 'raise' needs `after`")
        if self.on_failure and self.when:
            raise ValueError("give `when` or `on_failure`, not both")
        if self.part == "resume" and not (self.on_approved and self.on_rejected):
            raise ValueError("part 'resume' needs `on_approved` and `on_rejected`")
        return self


def add_review_gate(draft: Draft, args: AddReviewGateArgs, ctx: ToolContext) -> str:
    if args.part == "raise":
        return _raise(draft, args, ctx)
    return _resume(draft, args, ctx)


def raise_code(reviewer: str, subject: str, resume_path: str) -> str:
    """The raise step's code: POST the case to the review queue."""
    return (
        f"// Send the {subject} to the {reviewer} for review: POST it to the review queue\n"
        f"// (credential '{REVIEW_CREDENTIAL}': {{ baseUrl: <the review queue URL> }}).\n"
        f"// The decision comes back to the webhook {WEBHOOK_PREFIX}{resume_path} as\n"
        "// { decision: 'approved' | 'rejected' | 'corrected', case, corrected? }.\n"
        "post('reviews', state => JSON.stringify({\n"
        f"  reviewer: {js(reviewer)},\n"
        f"  subject: {js(subject)},\n"
        f"  decisions: {js(list(DECISIONS))},\n"
        f"  respondTo: {js(WEBHOOK_PREFIX + resume_path)},\n"
        "  case: state.data ?? {},\n"
        "}));"
    )


def decision_code(reviewer: str) -> str:
    """The resume workflow's first step: the payload must follow the contract."""
    return (
        f"// Read the {reviewer}'s decision: {{ decision, case, corrected? }}.\n"
        "fn(state => {\n"
        "  const payload = state.data ?? {};\n"
        f"  if (!{js(list(DECISIONS))}.includes(payload.decision)) {{\n"
        "    throw new Error(\n"
        "      'decision must be approved, rejected or corrected, got ' +\n"
        "        JSON.stringify(payload.decision),\n"
        "    );\n"
        "  }\n"
        "  const corrected = payload.corrected;\n"
        "  const fields = typeof corrected === 'object' && corrected !== null;\n"
        "  if (payload.decision === 'corrected' && !fields) {\n"
        "    throw new Error('a corrected decision needs the corrected fields in `corrected`');\n"
        "  }\n"
        "  return { ...state, data: { ...payload, case: payload.case ?? {} } };\n"
        "});"
    )


CORRECTIONS_CODE = (
    "// Apply the reviewer's corrections to the case, then continue with it.\n"
    "fn(state => ({\n"
    "  ...state,\n"
    "  data: { ...state.data, case: { ...state.data.case, ...state.data.corrected } },\n"
    "}));"
)


def decision_check(decision: str) -> str:
    return f"state.data.decision === {js_string(decision)}"


def _raise(draft: Draft, args: AddReviewGateArgs, ctx: ToolContext) -> str:
    after = require_job(draft.structure, args.after or "").key
    waiting = main_successors(draft, after)
    if waiting and not (args.when or args.on_failure):
        names = ", ".join(repr(draft.structure.jobs[k].name) for k in waiting)
        raise ToolInputError(
            f"{names} run{'s' if len(waiting) == 1 else ''} after {after!r} without waiting "
            "for the decision: OpenFn cannot pause a run. Move what must wait into the "
            "decision workflow (part 'resume'), or give `when` for an escalation branch.",
            code="review_gate_not_last",
        )
    shown = draft.structure.jobs[after].name
    name = _name(f"Send {args.subject} to {args.reviewer} for review")
    code = raise_code(args.reviewer, args.subject, args.resume_path)
    key = add_coded_step(draft, ctx, name, "http", code, credential=REVIEW_CREDENTIAL)
    if args.on_failure:
        connect(draft, ctx, after, key, "on_job_failure")
    elif args.when:
        connect(draft, ctx, after, key, "js_expression", on_success_and(args.when), "escalate")
    else:
        connect(draft, ctx, after, key, "on_job_success")
    return (
        f"Added {name!r} after {shown!r}"
        + (" when the escalation check holds" if args.when else "")
        + (f" when {shown!r} fails" if args.on_failure else "")
        + f": it posts the case to the review queue (credential '{REVIEW_CREDENTIAL}'); "
        f"the decision comes back to {WEBHOOK_PREFIX}{args.resume_path}."
    )


def _resume(draft: Draft, args: AddReviewGateArgs, ctx: ToolContext) -> str:
    structure = draft.structure
    approved = require_job(structure, args.on_approved or "").key
    rejected = require_job(structure, args.on_rejected or "").key
    corrected = require_job(structure, args.on_corrected or approved).key
    webhooks = [t for t in structure.triggers.values() if t.type == "webhook"]
    if len(structure.triggers) > 1 or (structure.triggers and not webhooks):
        raise ToolInputError(
            "The decision arrives on a webhook, and this workflow starts another way ("
            + ", ".join(f"{t.key}: {t.type}" for t in structure.triggers.values())
            + "); build the resume part in a workflow of its own.",
            code="review_resume_needs_webhook",
        )
    reader = add_coded_step(
        draft, ctx, _name(f"Read {args.reviewer} decision"), "common", decision_code(args.reviewer)
    )
    fixer = add_coded_step(
        draft, ctx, _name(f"Apply {args.reviewer} corrections"), "common", CORRECTIONS_CODE
    )
    if webhooks:
        trigger = webhooks[0]
        for edge in structure.edges_from(trigger.key):
            update_edge(draft, trigger.key, edge.target_job, EdgeFields(), None, reader)
        if trigger.custom_path != args.resume_path:
            draft.apply(UpdateEntry("triggers", trigger.key, {"custom_path": args.resume_path}))
            draft.note(Change("updated", "trigger", trigger.key, "custom_path"))
        if not structure.edges_from(trigger.key):
            connect(draft, ctx, trigger.key, reader)
    else:
        set_trigger(
            draft,
            TriggerSpec(type="webhook", custom_path=args.resume_path),
            ctx,
            connect=False,
        )
        connect(draft, ctx, "webhook", reader)
    for decision, target in (("approved", approved), ("rejected", rejected)):
        connect(
            draft,
            ctx,
            reader,
            target,
            "js_expression",
            on_success_and(decision_check(decision)),
            decision,
        )
    connect(
        draft,
        ctx,
        reader,
        fixer,
        "js_expression",
        on_success_and(decision_check("corrected")),
        "corrected",
    )
    connect(draft, ctx, fixer, corrected, "on_job_success")
    names = structure.jobs
    return (
        f"The decision arrives on the webhook {WEBHOOK_PREFIX}{args.resume_path}; "
        f"{names[reader].name!r} checks it, then approved -> {names[approved].name!r}, "
        f"rejected -> {names[rejected].name!r}, corrected -> {names[fixer].name!r} -> "
        f"{names[corrected].name!r}."
    )


def _name(words: str) -> str:
    return sanitise_name(words)[:100].rstrip()


TOOL = ToolSpec(
    "add_review_gate",
    AddReviewGateArgs,
    "structural",
    add_review_gate,
    spinner="Adding the review gate…",
    action="add the review gate",
)
