"""Starting and resuming a graph's turns, traced: the one call the service makes into
``agents`` per turn (``app`` builds the runtime and relays the events it gets back).

A :class:`TurnEngine` wraps one :class:`~agents.runner.TurnRunner` (the workflow graph's
or the plan graph's) and the :class:`~agents.tracing.Tracer`::

    engine = TurnEngine.for_workflows(checkpointer, tracer)
    run = engine.start(turn_input, runtime, session_id=..., user_id=...)
    async for event in run.events: ...          # run.runtime.usage: the turn's calls
    run = engine.resume(turn_id, state, runtime, approved=True, earlier=calls, ...)

Nothing runs until ``run.events`` is iterated, so a caller may build the run where a
failure to set the turn up is handled and relay it outside.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langgraph.graph.state import CompiledStateGraph

from agents.events import Event, ModelCallUsage
from agents.graph import build_graph
from agents.plan.graph import build_plan_graph
from agents.plan.runtime import build_checkpointer
from agents.runner import TurnRunner
from agents.runtime import RecordsCalls
from agents.tracing import Tracer
from agents.usage import UsageLedger

R = TypeVar("R", bound=RecordsCalls)


@dataclass
class TurnRun(Generic[R]):
    """A started (or resumed) run of a turn: its events, and the traced runtime whose
    ``usage`` records its model calls."""

    runtime: R
    events: AsyncIterator[Event]

    @property
    def usage(self) -> UsageLedger:
        return self.runtime.usage


class TurnEngine:
    """Starts and resumes the turns of one graph, each traced (one trace per turn)."""

    def __init__(self, runner: TurnRunner, tracer: Tracer | None = None) -> None:
        self.runner = runner
        self.tracer = tracer or Tracer(None)

    @classmethod
    def for_workflows(cls, checkpointer: Any, tracer: Tracer | None = None) -> TurnEngine:
        """Workflow turns (:mod:`agents.graph`) checkpointed in ``checkpointer``; a
        finished turn's checkpoints are deleted (only a pause is resumed)."""
        return cls(TurnRunner(build_graph(checkpointer), keep_finished=False), tracer)

    @classmethod
    def for_plans(cls, checkpointer: Any, tracer: Tracer | None = None) -> TurnEngine:
        """Plan turns (:mod:`agents.plan`) checkpointed in ``checkpointer``."""
        return cls(TurnRunner(build_plan_graph(checkpointer), keep_finished=False), tracer)

    def start(
        self,
        turn: Mapping[str, Any],
        runtime: R,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tags: Sequence[str] = (),
    ) -> TurnRun[R]:
        """Run ``turn`` (the graph's input) with ``runtime``."""
        trace = self.tracer.turn(turn, session_id=session_id, user_id=user_id, tags=tags)
        runtime = trace.runtime(runtime)
        return TurnRun(runtime, trace.wrap(self.runner.start(turn, runtime)))

    def resume(
        self,
        turn_id: str,
        state: Mapping[str, Any],
        runtime: R,
        *,
        approved: bool,
        session_id: str | None = None,
        user_id: str | None = None,
        tags: Sequence[str] = (),
        earlier: Iterable[ModelCallUsage] = (),
        feedback: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> TurnRun[R]:
        """Continue paused turn ``turn_id`` (its checkpointed ``state``) with the answer;
        ``earlier``: the model calls before the pause, stored already, so the turn's
        totals include them. ``answer`` replaces the whole resume value (a review)."""
        trace = self.tracer.turn(state, session_id=session_id, user_id=user_id, tags=tags)
        runtime = trace.runtime(runtime)
        runtime.usage = UsageLedger.resumed(earlier)
        events = self.runner.resume(turn_id, approved, runtime, feedback=feedback, answer=answer)
        return TurnRun(runtime, trace.wrap(events))

    async def state(self, turn_id: str) -> dict[str, Any]:
        """A turn's checkpointed state."""
        return await self.runner.state(turn_id)

    async def pending(self, turn_id: str) -> dict[str, Any] | None:
        """What a paused turn waits for (:meth:`TurnRunner.pending_confirmation`)."""
        return await self.runner.pending_confirmation(turn_id)

    async def forget(self, turn_id: str) -> None:
        """Delete a turn's checkpoints."""
        await self.runner.forget(turn_id)


def plan_build_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """The workflow graph a plan turn builds each workflow with: its checkpoints in
    memory, since a build runs to its end within the plan turn."""
    return build_graph(build_checkpointer())
