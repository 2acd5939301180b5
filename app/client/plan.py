"""Plan mode in the terminal: a proposed plan as readable lines, the user's answer to
it (:func:`ask_answer`), a plan.progress frame as a status line, and a project's
workflows and plan status.

Pure functions over the wire frames (DESIGN §5a) but for :func:`ask_answer`: a
review is a ``plan.proposed`` frame, or a session's ``pending_confirmation`` whose
``plan`` holds ``{plan, contracts, delta, revision}``; :func:`review_from` reads either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from app.client.rest import Rest
from app.client.terminal import LineReader, Output, ask

Paint = Callable[[str, str], str]

FIELD_NAMES = {
    "name": "name",
    "purpose": "purpose",
    "trigger": "trigger",
    "inputs": "inputs",
    "outputs": "outputs",
    "depends_on": "depends on",
    "steps": "steps",
}
APPROVE = ("a", "approve", "y", "yes")
REJECT = ("r", "reject", "n", "no")
ADJUST = ("d", "adjust", "f", "feedback")
ANSWER_PROMPT = "  [a]pprove and build, a[d]just with feedback, or [r]eject? "
ANSWERED = {
    "approve": "  Approved: building the workflows…",
    "adjust": "  Feedback sent: revising the plan…",
    "reject": "  Rejected: nothing is built.",
}


def _plain(text: str, style: str) -> str:
    return text


def review_from(source: dict[str, Any] | None) -> dict[str, Any] | None:
    """The review in a ``plan.proposed`` frame or a ``pending_confirmation`` (None when it
    is not a plan review)."""
    if not source:
        return None
    part = source.get("plan")
    if isinstance(part, dict) and isinstance(part.get("plan"), dict):
        holder = part  # pending_confirmation.plan = {plan, contracts, delta, revision}
    elif isinstance(part, dict):
        holder = source  # a plan.proposed frame: the plan's parts beside it
    else:
        return None
    return {
        "turn_id": source.get("turn_id"),
        "request_id": source.get("request_id"),
        "question": source.get("question") or "",
        "plan": holder["plan"],
        "contracts": holder.get("contracts") or [],
        "delta": holder.get("delta"),
        "revision": holder.get("revision") or 1,
    }


def trigger_text(trigger: dict[str, Any] | None) -> str:
    if not trigger or trigger.get("type") != "cron":
        return "webhook"
    return f"cron {trigger.get('cron_expression') or '(no schedule)'}"


def _items(values: list[str] | None) -> str:
    return ", ".join(values) if values else "none"


def in_order(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The planned workflows in build order (any the order leaves out, after)."""
    by_key = {w["key"]: w for w in plan.get("workflows", [])}
    keys = [k for k in plan.get("order", []) if k in by_key]
    keys += [k for k in by_key if k not in keys]
    return [by_key[k] for k in keys]


def render_plan(review: dict[str, Any], paint: Paint = _plain) -> list[str]:
    """The plan as lines: summary, the changes (a delta), each workflow in build order,
    the order and the hand-offs."""
    plan = review["plan"]
    workflows = in_order(plan)
    names = {w["key"]: w["name"] for w in workflows}
    count = len(workflows)
    lines = [
        paint(
            f"Proposed plan, revision {review['revision']}: {count} workflow"
            f"{'' if count == 1 else 's'}",
            "bold",
        ),
        f"  {plan.get('summary', '')}",
    ]
    delta = review.get("delta")
    changed: dict[str, list[str]] = {}
    if delta:
        changed = {c["key"]: list(c.get("fields", [])) for c in delta.get("changed", [])}
        lines.append("  Changes from the plan built before:")
        for key in delta.get("added", []):
            lines.append(paint(f"    + added {key}", "green"))
        for key, fields in changed.items():
            what = ", ".join(FIELD_NAMES.get(f, f) for f in fields)
            lines.append(paint(f"    ~ changed {key} ({what})", "yellow"))
        for key in delta.get("removed", []):
            lines.append(paint(f"    - removed {key} (its workflow is kept as it is)", "red"))
        if not (delta.get("added") or changed or delta.get("removed")):
            lines.append("    nothing changes")
    added = set(delta.get("added", [])) if delta else set()
    for number, workflow in enumerate(workflows, 1):
        key = workflow["key"]
        mark = " (new)" if key in added else " (changed)" if key in changed else ""
        after = workflow.get("depends_on") or []
        starts = trigger_text(workflow.get("trigger"))
        if after:
            starts += f", after {', '.join(names.get(k, k) for k in after)}"
        lines.append(
            paint(f"  {number}. {workflow['name']} [{key}]{mark}", "bold") + f" · {starts}"
        )
        lines.append(f"     {workflow.get('purpose', '')}")
        lines.append(
            f"     inputs: {_items(workflow.get('inputs'))} · "
            f"outputs: {_items(workflow.get('outputs'))}"
        )
        for step_number, step in enumerate(workflow.get("steps") or [], 1):
            lines.append(f"       {step_number}) {step}")
    lines.append("  Build order: " + " → ".join(names.get(k, k) for k in plan.get("order", [])))
    contracts = review.get("contracts") or []
    if contracts:
        lines.append("  Hand-offs:")
        for contract in contracts:
            lines.append(
                f"    {names.get(contract['source'], contract['source'])} → "
                f"{names.get(contract['target'], contract['target'])}: "
                f"{_items(contract.get('data'))} "
                + (
                    f"(reviewed by the {contract.get('reviewer')}; the decision comes to "
                    f"/i/{contract.get('webhook_path', '')})"
                    if contract.get("via") == "review"
                    else f"(webhook /i/{contract.get('webhook_path', '')})"
                )
            )
    else:
        lines.append("  Hand-offs: none (the workflows run independently)")
    return lines


@dataclass(frozen=True)
class PlanAnswer:
    """What the user said to a plan: the ``confirm`` frame it becomes is :meth:`frame`."""

    action: Literal["approve", "adjust", "reject"]
    feedback: str | None = None

    def frame(self, request_id: str) -> dict[str, Any]:
        frame: dict[str, Any] = {
            "type": "confirm",
            "request_id": request_id,
            "approved": self.action == "approve",
        }
        if self.action == "adjust" and self.feedback:
            frame["feedback"] = self.feedback
        return frame


def parse_answer(text: str) -> PlanAnswer | Literal["adjust"] | None:
    """``a``/``approve`` (also y/yes), ``r``/``reject`` (also n/no), ``d``/``adjust``
    optionally followed by the feedback on the same line. ``"adjust"`` alone: feedback
    is still to be asked for; None: not an answer."""
    word, _, rest = text.strip().partition(" ")
    word = word.lower().rstrip(":")
    if word in APPROVE and not rest:
        return PlanAnswer("approve")
    if word in REJECT and not rest:
        return PlanAnswer("reject")
    if word in ADJUST:
        return PlanAnswer("adjust", rest.strip()) if rest.strip() else "adjust"
    return None


def progress_line(
    frame: dict[str, Any], names: dict[str, str]
) -> tuple[Literal["spinner", "settled", "failed"], str]:
    """A plan.progress frame as a status line: ``building`` spins; ``built`` and
    ``failed`` settle, naming the workflow (and its id once it has one)."""
    key = str(frame.get("workflow_key", ""))
    name = names.get(key, key)
    message = f": {frame['message']}" if frame.get("message") else ""
    status = frame.get("status")
    if status == "building":
        return "spinner", f"Building {name}…"
    if status == "failed":
        return "failed", f"Could not build {name}{message}"
    # A built workflow's own status lines already say what its build did.
    built = f" ({frame['workflow_id']})" if frame.get("workflow_id") else ""
    return "settled", f"Built {name}{built}"


def show_progress(out: Output, frame: dict[str, Any], names: dict[str, str]) -> None:
    """Write a plan.progress frame: a spinner while building, settled when done."""
    phase, text = progress_line(frame, names)
    if phase == "spinner":
        out.spinner(text)
    else:
        out.settled(text, mark="✗" if phase == "failed" else "✓")


def plan_status_text(record: dict[str, Any] | None) -> str:
    """One line on where a project's plan stands (``GET /v1/projects/{id}`` ``plan``)."""
    if not record or not record.get("plan"):
        return "No plan yet: paste a spec with several processes (/plan), and review the plan."
    outcomes = list((record.get("workflows") or {}).values())
    total = len(record["plan"].get("workflows", []))

    def count(status: str) -> int:
        return sum(1 for o in outcomes if o.get("status") == status)

    status = record.get("status")
    if status == "proposed":
        return f"Plan revision {record.get('revision', 1)} ({total} workflows): waiting for review."
    if status == "rejected":
        return "The plan was rejected: nothing was built."
    if status == "building":
        return f"Building: {count('built')} of {total} built."
    if status == "built":
        return f"Built: {total} workflow{'' if total == 1 else 's'}."
    if status == "partial":
        return f"Partly built: {count('built')} built, {count('failed')} failed."
    return f"Plan: {status}"


def project_lines(project: dict[str, Any]) -> list[str]:
    """A project as lines: its plan status, then each workflow (planned ones with their
    key and outcome)."""
    record = project.get("plan")
    lines = [plan_status_text(record)]
    outcome_by_id = {}
    if record:
        for key, outcome in (record.get("workflows") or {}).items():
            if outcome.get("workflow_id"):
                outcome_by_id[outcome["workflow_id"]] = (key, outcome.get("status", ""))
    for workflow in project.get("workflows", []):
        key, status = outcome_by_id.get(workflow["id"], (None, None))
        planned = f" [{key}, {status}]" if key else ""
        lines.append(f"  {workflow['name']} v{workflow['version']}{planned}  ({workflow['id']})")
    if not project.get("workflows"):
        lines.append("  (no workflows yet)")
    return lines


async def ask_review(
    out: Output, lines: LineReader, review: dict[str, Any], *, read_only: bool
) -> PlanAnswer | None:
    """Show the plan and ask until the user approves, rejects or gives feedback; None
    when there is no answer (end of input, or a read-only session)."""
    out.lines(render_plan(review, out.paint))
    out.line(out.paint(f"? {review['question'] or 'Build this plan?'}", "yellow"))
    if read_only:
        out.line("  (read-only: an editor approves, adjusts or rejects this plan)")
        return None
    while True:
        reply = await ask(out, lines, ANSWER_PROMPT)
        if reply is None:
            break
        answer = parse_answer(reply)
        if answer == "adjust":
            feedback = await ask(out, lines, "  What should change? ")
            if feedback is None:
                break
            if not feedback.strip():
                out.line("  Say what should change (or answer a / r).")
                continue
            return PlanAnswer("adjust", feedback.strip())
        if answer is not None:
            return answer
        out.line("  Answer a (approve), d (adjust, then your feedback) or r (reject).")
    out.line("  (no answer: the plan stays waiting for review in this session)")
    return None


async def read_spec(out: Output, lines: LineReader, argument: str) -> str | None:
    """The spec ``/plan`` sends: the text after it, a file (``@path``), or, with nothing
    after it, the lines pasted up to one holding only ``.``; None: nothing to send."""
    if argument.startswith("@"):
        try:
            with open(argument[1:], encoding="utf-8") as file:
                argument = file.read()
        except OSError as exc:
            out.line(f"Cannot read {argument[1:]}: {exc.strerror or exc}")
            return None
    elif not argument:
        out.line('Paste the spec, then a line with just "." to send it.')
        pasted: list[str] = []
        while (line := await lines.read()) is not None and line.strip() != ".":
            if not lines.interactive:
                out.echo(line)  # scripted input: keep the transcript readable
            pasted.append(line)
        argument = "\n".join(pasted)
    if not argument.strip():
        out.line("Nothing to plan: give the spec after /plan.")
        return None
    return argument


async def show_project(rest: Rest, out: Output, project_id: str | None) -> None:
    """``/project``: the project's plan status and workflows."""
    if not project_id:
        out.line("This workflow session has no project.")
        return
    out.lines(project_lines(await rest.call("GET", f"/v1/projects/{project_id}")))
