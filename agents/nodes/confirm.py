"""Pause before a round whose calls need a yes (each tool's spec says which and why).

Two reasons to ask, in one question: a tool's confirmation rule (code would be lost,
every step removed, a webhook's response settings dropped), and the round's impact
(DESIGN §5c): a round with a call whose spec says it can change what runs is tried on
a copy of the document, and if it removes a step or trigger, leaves steps no trigger
reaches, removes or disables a connection or changes a trigger's type, the question
names each (``tools.document.impact``). In review mode nothing pauses here: the
proposal is the confirmation, and carries the same impact; a read-only session never
asks.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agents.runtime import TurnRuntime
from agents.state import TurnState
from tools.base import ConfirmRule
from tools.edits.preview_change import simulate
from tools.registry import spec_for


async def confirm_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    """Pause with ``interrupt`` when a tool's confirmation rule asks or the round has
    impact; resumes with the answer.

    Each tool's rule sees all of its calls in the round together, so two
    ``remove_jobs`` calls ask as one. One question covers every call that asked.
    """
    if state.get("read_only") or state.get("review"):
        return {"approvals": {}}
    rt = runtime.context
    doc = rt.document(state["yaml"], state["version"])
    # Calls past the tool budget will not run (the tools node refuses them): not asked about.
    left = max(0, rt.config.max_tool_calls - state.get("tool_calls", 0))
    uses = [u for u in (state.get("pending") or [])[:left] if isinstance(u.get("input"), dict)]
    by_rule: dict[ConfirmRule, list[dict[str, Any]]] = {}
    structural: list[dict[str, Any]] = []
    for use in uses:
        spec = spec_for(use["name"])
        if spec is None:
            continue
        if spec.confirm is not None:
            by_rule.setdefault(spec.confirm, []).append(use)
        if spec.structural:
            structural.append(use)
    use_ids: list[str] = []
    descriptions: list[str] = []
    for rule, ruled in by_rule.items():
        description = rule(doc.structure, [u["input"] for u in ruled])
        if description is not None:
            descriptions.append(description)
            use_ids += [u["id"] for u in ruled]
    impact_text, impact_ids, actions = "", [], []
    if any(_may_have_impact(u) for u in structural):
        calls = [(u["name"], u["input"]) for u in structural]
        # A copy and the round's validations: CPU work, off the event loop.
        trial = await asyncio.to_thread(simulate, doc, calls, rt.tools)
        found = trial.impact
        if found:
            impact_text = found.text
            impact_ids = [u["id"] for u in structural if _may_have_impact(u)]
            actions = list(dict.fromkeys(_action(u) for u in structural if _may_have_impact(u)))
    use_ids += [i for i in impact_ids if i not in use_ids]
    if not use_ids:
        return {"approvals": {}}
    question = _question(descriptions, actions, impact_text)
    answer = interrupt({"request_id": f"confirm-{use_ids[0]}", "question": question})
    approved = answer is True or (isinstance(answer, dict) and answer.get("approved") is True)
    feedback = answer.get("feedback") if isinstance(answer, dict) else None
    return {
        "approvals": {use_id: approved for use_id in use_ids},
        # The words that came with the answer reach the model with the round's results.
        "confirmation_feedback": feedback.strip() if isinstance(feedback, str) else None,
    }


def _may_have_impact(use: dict[str, Any]) -> bool:
    spec = spec_for(use["name"])
    return spec is not None and spec.impact


def _action(use: dict[str, Any]) -> str:
    spec = spec_for(use["name"])
    return spec.action if spec is not None else "change the workflow"


def _question(descriptions: list[str], actions: list[str], impact_text: str) -> str:
    """'The assistant wants to <rules, or the calls' actions>. <impact> Go ahead?'"""
    wants = descriptions or actions
    parts = [f"The assistant wants to {'; and '.join(wants)}."]
    if impact_text:
        parts.append(impact_text)
    parts.append("Go ahead?")
    return " ".join(parts)
