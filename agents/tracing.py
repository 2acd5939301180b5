"""Langfuse tracing for turns, without the graph knowing.

One trace per turn (its id derived from the turn id, so a resumed turn lands in
the same trace): a root ``turn`` observation carrying session id, user id,
tags, route and read-only; a generation per model call (model, usage with
cache tokens, prompt name/version/hash) through :class:`TracedModel`; a tool
span per tool and an agent span per code sub-agent, read from the runner's
``status`` events. Secrets are masked by :func:`agents.masking.mask_secrets` before anything
leaves the process. Without Langfuse configured, :class:`Tracer` is a no-op
and no client is ever built::

    tracer = Tracer(LangfuseConfig.from_env().client())
    trace = tracer.turn(turn_input, session_id=..., user_id=...)
    runtime = trace.runtime(runtime)                   # models wrapped
    async for event in trace.wrap(runner.start(turn_input, runtime)): ...
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, SecretStr

from agents.events import (
    ConfirmEvent,
    Event,
    MessageEvent,
    RouteEvent,
    StatusEvent,
    TurnCompletedEvent,
    WorkflowEvent,
)
from agents.masking import mask_secrets
from agents.models.base import ChatModel, ModelRequest, ModelResponse, TextSink
from agents.runtime import AgentConfig, TurnRuntime
from agents.usage import DEFAULT_PRICES, ModelPrice, cost_breakdown


class _Traceable(Protocol):
    """A run's context whose model calls can be traced (``TurnRuntime``, ``PlanRuntime``)."""

    @property
    def models(self) -> Mapping[Any, ChatModel]: ...

    @property
    def config(self) -> AgentConfig: ...


_R = TypeVar("_R", bound=_Traceable)


class LangfuseConfig(BaseModel):
    """``LANGFUSE_PUBLIC_KEY``, ``LANGFUSE_SECRET_KEY``, ``LANGFUSE_HOST``."""

    public_key: str | None = None
    secret_key: SecretStr | None = None
    host: str = "https://cloud.langfuse.com"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LangfuseConfig:
        env = os.environ if env is None else env
        secret = env.get("LANGFUSE_SECRET_KEY")
        return cls(
            public_key=env.get("LANGFUSE_PUBLIC_KEY") or None,
            secret_key=SecretStr(secret) if secret else None,
            host=env.get("LANGFUSE_HOST") or env.get("LANGFUSE_BASE_URL") or cls().host,
        )

    @property
    def configured(self) -> bool:
        return bool(self.public_key and self.secret_key and self.secret_key.get_secret_value())

    def client(self, **overrides: Any) -> Any | None:
        """A ``langfuse.Langfuse`` client with secret masking, or ``None`` if not configured."""
        if not self.configured:
            return None
        from langfuse import Langfuse

        assert self.secret_key is not None
        options: dict[str, Any] = {
            "public_key": self.public_key,
            "secret_key": self.secret_key.get_secret_value(),
            "base_url": self.host,
            "mask": mask_secrets,
        }
        options.update(overrides)
        return Langfuse(**options)


class TracedModel:
    """A :class:`ChatModel` that records each call as a generation in the turn's trace."""

    def __init__(
        self, inner: ChatModel, trace: TurnTrace, prices: Mapping[str, ModelPrice] | None = None
    ) -> None:
        self.inner, self.trace = inner, trace
        self.prices: Mapping[str, ModelPrice] = DEFAULT_PRICES if prices is None else prices
        self.name = inner.name

    async def create(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        generation = self.trace.start_generation(request, self.inner)
        try:
            response = await self.inner.create(request, on_text=on_text)
        except BaseException as exc:
            generation.update(level="ERROR", status_message=f"{type(exc).__name__}: {exc}")
            generation.end()
            raise
        if request.role == "planner":
            self.trace.expect_tools(response.tool_uses)
        model = response.model or self.inner.name
        generation.update(
            output=response.content,
            model=model,
            usage_details=_langfuse(response.usage.as_dict()),
            # Our price table's numbers, so Langfuse shows what the store records; an
            # unpriced model sends none and Langfuse may infer its own.
            cost_details=_langfuse(cost_breakdown(model, response.usage, self.prices)),
            metadata={"stop_reason": response.stop_reason},
        )
        generation.end()
        return response


# Langfuse's usage keys for Anthropic, from our Usage field names.
_LANGFUSE_KEYS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_input_tokens": "cache_read_input_tokens",
    "cache_creation_input_tokens": "cache_creation_input_tokens",
    "total": "total",
}


def _langfuse(values: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if values is None else {_LANGFUSE_KEYS[k]: v for k, v in values.items()}


class _NoopTrace:
    """What a disabled tracer hands out: passes everything through untouched."""

    def runtime(self, runtime: _R) -> _R:
        return runtime

    def event(self, event: Event) -> None:
        return None

    def close(self, error: BaseException | None = None) -> None:
        return None

    async def wrap(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        async for event in events:
            yield event


class TurnTrace(_NoopTrace):
    """The trace of one turn (or of one resumption of it)."""

    def __init__(
        self,
        client: Any,
        turn: Mapping[str, Any],
        attributes: dict[str, Any],
        links: Callable[[str | None], Any] | None,
    ) -> None:
        self.client, self.links = client, links
        self.turn_id = str(turn.get("turn_id") or "")
        self.attributes = attributes
        self.trace_id = client.create_trace_id(seed=self.turn_id) if self.turn_id else None
        self.root = client.start_observation(
            trace_context={"trace_id": self.trace_id} if self.trace_id else None,
            name="turn",
            as_type="agent",
            input={
                k: turn.get(k) for k in ("user_text", "page", "job_key", "errors") if turn.get(k)
            },
            metadata={
                "turn_id": self.turn_id,
                "workflow_id": turn.get("workflow_id"),
                "version": turn.get("version"),
            },
        )
        self._stamp(self.root)
        self._tools: dict[str, Any] = {}  # open tool spans by tool_use id
        self._last_tool: Any | None = None  # the open tool span a workflow event belongs to
        self._agents: dict[str, Any] = {}  # sub-agent spans by job name
        self._inputs: dict[str, Any] = {}  # planner tool_use inputs by id
        self._closed = False

    def _stamp(self, observation: Any) -> None:
        span = getattr(observation, "_otel_span", None)
        if span is None or not span.is_recording():
            return
        for key, value in self.attributes.items():
            if value is not None:
                span.set_attribute(key, value)

    def _child(self, parent: Any, **kwargs: Any) -> Any:
        child = parent.start_observation(**kwargs)
        self._stamp(child)
        return child

    def runtime(self, runtime: _R) -> _R:
        """The runtime (a turn's or a plan turn's) with each model call traced."""
        prices = runtime.config.prices
        models = {role: TracedModel(model, self, prices) for role, model in runtime.models.items()}
        return dataclasses.replace(runtime, models=models)  # type: ignore[type-var]

    def start_generation(self, request: ModelRequest, model: ChatModel) -> Any:
        parent = self.root
        if request.role == "job_code":
            job = request.context.job or {}
            name = str(job.get("name") or request.context.job_key or "")
            parent = self._agent(name)
        link = self.links(request.prompt_hash) if self.links else None
        return self._child(
            parent,
            name=f"{request.role} model call",
            as_type="generation",
            input={
                "system": request.system,
                "messages": request.messages,
                "tools": [t.get("name") for t in request.tools],
            },
            model=getattr(model, "name", None),
            model_parameters={"max_tokens": request.max_tokens},
            metadata={
                "role": request.role,
                "prompt_name": request.prompt_name,
                "prompt_version": request.prompt_version,
                "prompt_hash": request.prompt_hash,
            },
            prompt=link,
        )

    def expect_tools(self, uses: Sequence[dict[str, Any]]) -> None:
        self._inputs.update({str(u.get("id")): u.get("input") for u in uses})

    def _agent(self, name: str) -> Any:
        if name not in self._agents:
            self._agents[name] = self._child(
                self.root, name=f"code agent: {name}", as_type="agent", input={"job": name}
            )
        return self._agents[name]

    def event(self, event: Event) -> None:
        if isinstance(event, RouteEvent):
            self.attributes["langfuse.trace.metadata.route"] = json.dumps(event.destination)
            self._stamp(self.root)
        elif isinstance(event, StatusEvent):
            self._status(event)
        elif isinstance(event, WorkflowEvent) and self._last_tool is not None:
            self._last_tool.update(metadata={"version": event.version, "changes": event.changes})
        elif isinstance(event, MessageEvent):
            self.root.update(output=event.text)
        elif isinstance(event, ConfirmEvent):
            self.root.update(output={"confirm": event.question}, metadata={"paused": True})
        elif isinstance(event, TurnCompletedEvent):
            self.root.update(
                metadata={
                    "tool_rounds": event.tool_rounds,
                    "usage": event.usage.model_dump(exclude={"calls"}),
                    "duration_ms": event.duration_ms,
                    "version": event.version,
                }
            )

    def _status(self, event: StatusEvent) -> None:
        if event.job_key is not None:  # a code sub-agent (fan-out or the direct route)
            name = event.job_name or event.job_key
            if event.phase == "spinner":
                self._agent(name)
            elif name in self._agents:
                self._agents.pop(name).update(output=event.text).end()
            return
        use_id = event.tool_use_id or event.tool
        if event.phase == "spinner":
            span = self._child(
                self.root, name=event.tool, as_type="tool", input=self._inputs.pop(use_id, None)
            )
            self._tools[use_id] = span.update(metadata={"status": event.text})
            self._last_tool = self._tools[use_id]
            return
        open_span = self._tools.pop(use_id, None)
        if open_span is not None:
            open_span.update(output=event.text).end()
            if open_span is self._last_tool:
                self._last_tool = None

    def close(self, error: BaseException | None = None) -> None:
        if self._closed:
            return
        self._closed = True
        for span in self._tools.values():
            span.end()
        for span in self._agents.values():
            span.end()
        if error is not None:
            self.root.update(level="ERROR", status_message=f"{type(error).__name__}: {error}")
        self.root.end()

    async def wrap(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        """Observe a runner stream; closes the trace when it ends (or fails)."""
        try:
            async for event in events:
                self.event(event)
                yield event
        except GeneratorExit:  # the consumer stopped early (cancelled turn, closed socket)
            self.root.update(metadata={"stopped_early": True})
            self.close(None)
            raise
        except BaseException as exc:
            self.close(exc)
            raise
        self.close(None)


class Tracer:
    """Hands out a :class:`TurnTrace` per turn, or no-ops when ``client`` is ``None``."""

    def __init__(
        self,
        client: Any | None = None,
        *,
        tags: Sequence[str] = (),
        prompt_links: Callable[[str | None], Any] | None = None,
    ) -> None:
        self.client, self.tags, self.prompt_links = client, list(tags), prompt_links

    @property
    def enabled(self) -> bool:
        return self.client is not None

    def turn(
        self,
        turn: Mapping[str, Any],
        runtime: TurnRuntime | None = None,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tags: Sequence[str] = (),
    ) -> _NoopTrace:
        if self.client is None:
            return _NoopTrace()
        attributes: dict[str, Any] = {
            "langfuse.trace.name": "turn",
            "session.id": session_id or turn.get("workflow_id"),
            "user.id": user_id,
            "langfuse.trace.tags": [
                *self.tags,
                *tags,
                "read-only" if turn.get("read_only") else "editing",
            ],
            "langfuse.trace.metadata.read_only": json.dumps(bool(turn.get("read_only"))),
            "langfuse.trace.metadata.turn_id": json.dumps(turn.get("turn_id")),
        }
        return TurnTrace(self.client, turn, attributes, self.prompt_links)

    def flush(self) -> None:
        if self.client is not None:
            self.client.flush()

    def shutdown(self) -> None:
        if self.client is not None:
            self.client.shutdown()
