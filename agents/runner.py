"""Runs a turn through the graph and yields its events, ending in a summary.

The service consumes these events (adding ``seq``/``turn_id`` for the wire).
A turn that hits a confirmation ends its stream with ``confirm.required`` (a
plan turn's review with ``plan.proposed``); ``resume`` continues it (in this
process or another sharing the checkpointer). The same runner drives the
workflow graph (:mod:`agents.graph`) and the plan graph (:mod:`agents.plan`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from agents.events import (
    ConfirmEvent,
    Event,
    PlanProposedEvent,
    ProposalEvent,
    TurnCompletedEvent,
)
from agents.usage import UsageLedger

Paused = (ConfirmEvent, PlanProposedEvent, ProposalEvent)


class _RunContext(Protocol):
    """What the runner needs of a graph's context (``TurnRuntime``, ``PlanRuntime``)."""

    usage: UsageLedger


def pause_event(value: dict[str, Any]) -> ConfirmEvent | PlanProposedEvent | ProposalEvent:
    """The event for what a paused graph waits on: a plan review carries its plan, a
    review-mode turn its proposal."""
    if "plan" in value:
        return PlanProposedEvent.model_validate(value)
    if "proposal" in value:
        return ProposalEvent(
            request_id=value["request_id"], question=value["question"], **value["proposal"]
        )
    return ConfirmEvent(request_id=value["request_id"], question=value["question"])


class TurnRunner:
    def __init__(
        self,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        *,
        keep_finished: bool = True,
    ) -> None:
        self.graph = graph
        # The service passes False: a turn that ended (completed, failed or cancelled)
        # has nothing left to resume, and its checkpoints are megabytes on a big
        # workflow. Evals and tests keep them to read the final state.
        self.keep_finished = keep_finished

    @staticmethod
    def config(turn_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": turn_id}}

    async def start(self, turn: Any, runtime: _RunContext) -> AsyncIterator[Event]:
        async for event in self._forgetting(
            self._run(turn, turn["turn_id"], runtime), turn["turn_id"]
        ):
            yield event

    async def resume(
        self,
        turn_id: str,
        approved: bool,
        runtime: _RunContext,
        *,
        feedback: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> AsyncIterator[Event]:
        """Continue a paused turn with the answer (and the words that came with it);
        ``answer`` replaces the whole resume value (a proposal's review answer)."""
        if answer is None:
            answer = {"approved": approved, "feedback": feedback}
        events = self._run(Command(resume=answer), turn_id, runtime)
        async for event in self._forgetting(events, turn_id):
            yield event

    async def _forgetting(self, events: AsyncIterator[Event], turn_id: str) -> AsyncIterator[Event]:
        paused = False
        try:
            async for event in events:
                paused = isinstance(event, Paused)
                yield event
        finally:
            # Whatever ended the turn (done, error, cancel), only a pause is resumable.
            if not paused and not self.keep_finished:
                await self.forget(turn_id)

    async def state(self, turn_id: str) -> dict[str, Any]:
        snapshot = await self.graph.aget_state(self.config(turn_id))
        return dict(snapshot.values)

    async def forget(self, turn_id: str) -> None:
        """Delete every checkpoint of a turn (a no-op when it has none)."""
        checkpointer = self.graph.checkpointer
        if isinstance(checkpointer, BaseCheckpointSaver):
            await checkpointer.adelete_thread(turn_id)

    async def pending_confirmation(self, turn_id: str) -> dict[str, Any] | None:
        """What a paused turn waits for: ``request_id`` and ``question``, and for a plan
        review the ``plan.proposed`` fields (``plan``, ``contracts``, ``delta``, ``revision``)."""
        snapshot = await self.graph.aget_state(self.config(turn_id))
        for interrupt in snapshot.interrupts:
            value: dict[str, Any] = interrupt.value
            return value
        return None

    async def _run(self, payload: Any, turn_id: str, runtime: _RunContext) -> AsyncIterator[Event]:
        started = time.perf_counter()
        config = self.config(turn_id)
        paused: Event | None = None
        # Checkpoints are written when the run stops (finished or paused), not after
        # every step: only a pause is ever resumed, and per-step writes of the whole
        # state cost megabytes per turn on a big workflow.
        stream = self.graph.astream(
            payload, config, context=runtime, stream_mode=["custom", "updates"], durability="exit"
        )
        async for mode, chunk in stream:
            data: Any = chunk  # (mode, chunk) pairs; langgraph types the chunk loosely
            if mode == "custom":
                yield data  # nodes write only agents.events models
            elif mode == "updates" and "__interrupt__" in data:
                paused = pause_event(data["__interrupt__"][0].value)
        if paused is not None:
            yield paused
            return
        values = await self.state(turn_id)
        yield TurnCompletedEvent(
            version=values.get("version", 0),
            tool_rounds=values.get("tool_rounds", 0),
            usage=runtime.usage.totals(),
            duration_ms=round((time.perf_counter() - started) * 1000),
        )
