"""Runs a turn through the graph and yields its events, ending in a summary.

The service consumes these events (adding ``seq``/``turn_id`` for the wire).
A turn that hits a confirmation ends its stream with ``confirm.required``;
``resume`` continues it (in this process or another sharing the checkpointer).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from agents.events import ConfirmEvent, Event, TurnCompletedEvent, TurnUsage
from agents.runtime import TurnRuntime
from agents.state import TurnInput, TurnState


class TurnRunner:
    def __init__(self, graph: CompiledStateGraph[TurnState, TurnRuntime, TurnInput, TurnState]):
        self.graph = graph

    @staticmethod
    def config(turn_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": turn_id}}

    async def start(self, turn: TurnInput, runtime: TurnRuntime) -> AsyncIterator[Event]:
        async for event in self._run(turn, turn["turn_id"], runtime):
            yield event

    async def resume(
        self, turn_id: str, approved: bool, runtime: TurnRuntime
    ) -> AsyncIterator[Event]:
        async for event in self._run(Command(resume={"approved": approved}), turn_id, runtime):
            yield event

    async def state(self, turn_id: str) -> dict[str, Any]:
        snapshot = await self.graph.aget_state(self.config(turn_id))
        return dict(snapshot.values)

    async def pending_confirmation(self, turn_id: str) -> dict[str, Any] | None:
        """The confirmation a paused turn waits for (``request_id``, ``question``)."""
        snapshot = await self.graph.aget_state(self.config(turn_id))
        for interrupt in snapshot.interrupts:
            value: dict[str, Any] = interrupt.value
            return value
        return None

    async def _run(self, payload: Any, turn_id: str, runtime: TurnRuntime) -> AsyncIterator[Event]:
        started = time.perf_counter()
        config = self.config(turn_id)
        paused: Event | None = None
        stream = self.graph.astream(
            payload, config, context=runtime, stream_mode=["custom", "updates"]
        )
        async for mode, chunk in stream:
            data: Any = chunk  # (mode, chunk) pairs; langgraph types the chunk loosely
            if mode == "custom":
                yield data  # nodes write only agents.events models
            elif mode == "updates" and "__interrupt__" in data:
                value = data["__interrupt__"][0].value
                paused = ConfirmEvent(request_id=value["request_id"], question=value["question"])
        if paused is not None:
            yield paused
            return
        values = await self.state(turn_id)
        usage = values.get("usage") or {}
        yield TurnCompletedEvent(
            version=values.get("version", 0),
            tool_rounds=values.get("tool_rounds", 0),
            usage=TurnUsage(
                input_tokens=usage.get("input_tokens", 0),
                output_tokens=usage.get("output_tokens", 0),
            ),
            duration_ms=round((time.perf_counter() - started) * 1000),
        )
