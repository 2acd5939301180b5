"""The turn graph: route -> planner <-> tools (with confirmation and code fan-out) -> finish;
in review mode, propose -> review (the pause on the proposal) before finish.

``build_graph`` takes its checkpointer as an argument; models, settings and
the committer arrive per run as the LangGraph context (``TurnRuntime``), so
nothing is built at import and a paused turn can resume in any process that
shares the checkpointer.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.nodes.code import collect_node, direct_code_node, job_code_node
from agents.nodes.confirm import confirm_node
from agents.nodes.finish import finish_node
from agents.nodes.planner import planner_node
from agents.nodes.review import propose_node, review_node
from agents.nodes.route import route_node
from agents.nodes.tools_round import tools_node
from agents.runtime import TurnRuntime
from agents.state import CodeTask, TurnInput, TurnState


# Routers are coroutines: LangGraph runs a plain function in the thread pool, a
# hand-off per round that costs more than the routing (more still on a busy machine).
async def _after_route(state: TurnState) -> Literal["direct_code", "planner"]:
    return "direct_code" if state.get("route") == "job_code" else "planner"


async def _after_planner(state: TurnState) -> Literal["confirm", "propose", "finish"]:
    if state.get("pending"):
        return "confirm"
    return await _after_edits(state)


async def _after_edits(state: TurnState) -> Literal["propose", "finish"]:
    """A review-mode turn that changed something proposes it; any other turn is done."""
    return "propose" if state.get("review") and state.get("draft") else "finish"


def build_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> CompiledStateGraph[TurnState, TurnRuntime, TurnInput, TurnState]:
    builder = StateGraph(TurnState, context_schema=TurnRuntime, input_schema=TurnInput)
    builder.add_node("route", route_node)
    builder.add_node("planner", planner_node)
    builder.add_node("confirm", confirm_node)
    builder.add_node("tools", tools_node, destinations=("planner", "job_code"))
    # Send delivers a CodeTask, not the turn state; langgraph's overloads cannot express it.
    builder.add_node("job_code", job_code_node, input_schema=CodeTask)  # type: ignore[call-overload]
    builder.add_node("collect", collect_node)
    builder.add_node("direct_code", direct_code_node)
    builder.add_node("propose", propose_node)
    builder.add_node("review", review_node)
    builder.add_node("finish", finish_node)
    builder.add_edge(START, "route")
    builder.add_conditional_edges("route", _after_route, ["planner", "direct_code"])
    builder.add_conditional_edges("planner", _after_planner, ["confirm", "propose", "finish"])
    builder.add_edge("confirm", "tools")
    builder.add_edge("job_code", "collect")
    builder.add_edge("collect", "planner")
    builder.add_conditional_edges("direct_code", _after_edits, ["propose", "finish"])
    builder.add_edge("propose", "review")
    builder.add_edge("review", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer)
