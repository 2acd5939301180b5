"""The plan graph: propose -> review (pause) -> build | revise | reject -> finish.

Like :mod:`agents.graph`, it takes its checkpointer as an argument and gets its
models and workspace per run as the LangGraph context (``PlanRuntime``); the
review pause resumes in any process that shares the checkpointer.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from agents.events import MessageEvent
from agents.plan.build import build_node
from agents.plan.propose import propose_node
from agents.plan.review import reject_node, review_node
from agents.plan.runtime import PlanRuntime
from agents.plan.state import PlanInput, PlanState


def _after_propose(state: PlanState) -> Literal["review", "finish"]:
    return "review" if state.get("proposal") and not state.get("final_text") else "finish"


def _after_review(state: PlanState) -> Literal["build", "propose", "reject"]:
    decision = state.get("decision")
    if decision == "approved":
        return "build"
    return "propose" if decision == "revise" else "reject"


def finish_node(state: PlanState, runtime: Runtime[PlanRuntime]) -> dict[str, Any]:
    runtime.stream_writer(MessageEvent(text=state.get("final_text") or ""))
    return {}


def build_plan_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> CompiledStateGraph[PlanState, PlanRuntime, PlanInput, PlanState]:
    builder = StateGraph(PlanState, context_schema=PlanRuntime, input_schema=PlanInput)
    builder.add_node("propose", propose_node)
    builder.add_node("review", review_node)
    builder.add_node("build", build_node)
    builder.add_node("reject", reject_node)
    builder.add_node("finish", finish_node)
    builder.add_edge(START, "propose")
    builder.add_conditional_edges("propose", _after_propose, ["review", "finish"])
    builder.add_conditional_edges("review", _after_review, ["build", "propose", "reject"])
    builder.add_edge("build", "finish")
    builder.add_edge("reject", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer)
