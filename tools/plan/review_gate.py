"""Review gates between planned workflows (a ``review`` :class:`~tools.plan.model.Contract`).

``A -> B`` via review means A's run ends by sending its result to the review queue and
B starts on the reviewer's decision, posted to B's webhook. Like the hand-offs of
:mod:`tools.plan.handoff`, two pure functions give the ordinary tool calls
(``add_review_gate``) that build it, and give none when it is already there:

* :func:`raise_calls` on A: the gate's ``raise`` part after each of A's terminal steps;
* :func:`resume_calls` on B: a step for a rejection, then the gate's ``resume`` part, so
  the decision reaches the step B's trigger started (approved, or corrected with the
  corrected fields merged into the case) or the rejection step.
"""

from __future__ import annotations

from tools.document.names import derive_key, sanitise_name
from tools.document.structure import Structure
from tools.edits import add_jobs, add_review_gate
from tools.edits.add_review_gate import WEBHOOK_PREFIX
from tools.errors import ToolInputError
from tools.plan.handoff import ToolCall, terminal_steps
from tools.plan.model import Contract


def review_steps(structure: Structure, path: str) -> list[str]:
    """The keys of the steps that send the case for review with the decision going to
    ``path`` (recognised by their code, whatever they were renamed to)."""
    marker = f'respondTo: "{WEBHOOK_PREFIX}{path}"'
    return [k for k, job in structure.jobs.items() if marker in (job.body or "")]


def raises_review(structure: Structure, path: str) -> bool:
    """Whether a step already sends the case for review with the decision coming to ``path``."""
    return bool(review_steps(structure, path))


def raise_calls(structure: Structure, contract: Contract, subject: str = "case") -> list[ToolCall]:
    """The calls that end ``structure`` (the contract's source) by raising the review."""
    if raises_review(structure, contract.webhook_path):
        return []
    ends = [k for k in terminal_steps(structure) if k in structure.jobs]
    if not ends:
        raise ToolInputError(
            f"Workflow {structure.name or contract.source!r} has no step to send for review.",
            code="review_gate_no_source",
        )
    return [
        (
            add_review_gate.TOOL.name,
            {
                "part": "raise",
                "reviewer": contract.reviewer or "reviewer",
                "subject": subject,
                "resume_path": contract.webhook_path,
                "after": key,
            },
        )
        for key in ends
    ]


def resume_calls(structure: Structure, contract: Contract) -> list[ToolCall]:
    """The calls that start ``structure`` (the contract's target) on the decision."""
    path = contract.webhook_path
    reviewer = contract.reviewer or "reviewer"
    if any(t.custom_path == path for t in structure.triggers.values()) and any(
        e.condition_label == "approved" for e in structure.edges.values()
    ):
        return []
    starts = [e.target_job for t in structure.triggers for e in structure.edges_from(t)]
    if len(starts) != 1:
        roots = structure.root_jobs()
        starts = roots if len(roots) == 1 else []
    if not starts:
        raise ToolInputError(
            f"Workflow {structure.name or contract.target!r} has no single first step for an "
            "approved decision to go to.",
            code="review_gate_no_start",
        )
    name = sanitise_name(f"Record {reviewer} rejection")
    key = derive_key(name)
    n = 1
    while key in structure.jobs or key in structure.triggers:
        n += 1
        key = f"{derive_key(name)}-{n}"
    return [
        (add_jobs.TOOL.name, {"jobs": [{"key": key, "name": name, "adaptor": "common"}]}),
        (
            add_review_gate.TOOL.name,
            {
                "part": "resume",
                "reviewer": reviewer,
                "subject": "case",
                "resume_path": path,
                "on_approved": starts[0],
                "on_rejected": key,
            },
        ),
    ]


__all__ = ["raise_calls", "raises_review", "resume_calls", "review_steps"]
