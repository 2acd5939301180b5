"""Review: the plan turn pauses on ``plan.proposed`` until someone answers (DESIGN §5a.2).

The pause is a LangGraph interrupt, so it is checkpointed: the answer may come
after a reload, from another device or through another worker. ``approved``
builds; feedback revises (back to :mod:`agents.plan.propose`); a plain "no"
rejects and builds nothing.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agents.plan.runtime import PlanRuntime
from agents.plan.state import PlanState
from tools.plan import PlanRecord

QUESTION = "Build these {n} workflows in this order? Approve, adjust with feedback, or reject."
REJECTED = "The plan was rejected, so nothing was built."


def review_node(state: PlanState, runtime: Runtime[PlanRuntime]) -> dict[str, Any]:
    plan = state["proposal"] or {}
    question = QUESTION.format(n=len(plan.get("workflows") or []))
    notice = state.get("notice")
    if notice:
        question = f"{notice} {question}"
    answer = interrupt(
        {
            "request_id": state["request_id"],
            "question": question,
            "plan": plan,
            "contracts": state.get("contracts") or [],
            "delta": state.get("delta"),
            "revision": state.get("revision", 1),
        }
    )
    approved = isinstance(answer, dict) and answer.get("approved") is True
    raw = answer.get("feedback") if isinstance(answer, dict) else None
    feedback = raw.strip() if isinstance(raw, str) else ""
    decision: Literal["approved", "rejected", "revise"]
    if approved:
        decision = "approved"
    elif feedback:
        decision = "revise"
    else:
        decision = "rejected"
    return {"decision": decision, "feedback": feedback or None}


async def reject_node(state: PlanState, runtime: Runtime[PlanRuntime]) -> dict[str, Any]:
    record = PlanRecord.model_validate(state["record"])
    record = record.model_copy(update={"status": "rejected", "request_id": None})
    await runtime.context.workspace.save_plan(record)
    return {"record": record.model_dump(mode="json"), "final_text": REJECTED}
