"""Pause before a round whose calls need a yes (each tool's spec says which and why)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agents.runtime import TurnRuntime
from agents.state import TurnState
from tools.base import ConfirmRule
from tools.registry import spec_for


async def confirm_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    """Pause with ``interrupt`` when a tool's confirmation rule asks; resumes with the answer.

    Each tool's rule sees all of its calls in the round together, so two
    ``remove_jobs`` calls ask as one. One question covers every call that asked.
    """
    if state.get("read_only"):
        return {"approvals": {}}
    doc = runtime.context.document(state["yaml"], state["version"])
    by_rule: dict[ConfirmRule, list[dict[str, Any]]] = {}
    for use in state.get("pending") or []:
        spec = spec_for(use["name"])
        if spec is not None and spec.confirm is not None and isinstance(use.get("input"), dict):
            by_rule.setdefault(spec.confirm, []).append(use)
    use_ids: list[str] = []
    descriptions: list[str] = []
    for rule, uses in by_rule.items():
        description = rule(doc.structure, [u["input"] for u in uses])
        if description is not None:
            descriptions.append(description)
            use_ids += [u["id"] for u in uses]
    if not use_ids:
        return {"approvals": {}}
    question = f"The assistant wants to {'; and '.join(descriptions)}. Go ahead?"
    answer = interrupt({"request_id": f"confirm-{use_ids[0]}", "question": question})
    approved = answer is True or (isinstance(answer, dict) and answer.get("approved") is True)
    feedback = answer.get("feedback") if isinstance(answer, dict) else None
    return {
        "approvals": {use_id: approved for use_id in use_ids},
        # The words that came with the answer reach the model with the round's results.
        "confirmation_feedback": feedback.strip() if isinstance(feedback, str) else None,
    }
