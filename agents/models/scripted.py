"""``ScriptedModel``: a :class:`~agents.models.base.ChatModel` that plays back a script.

For tests and benchmarks. Each call takes the next step of the script::

    model = ScriptedModel([
        ScriptedModel.tool_calls(("add_jobs", {"jobs": [...]})),
        ScriptedModel.text("Added the step."),
    ])

A step is a :class:`ModelResponse`, a callable ``(ModelRequest) -> ModelResponse``
(sync or async) or an exception instance to raise. With a mapping,
``ScriptedModel({"router": [...], "planner": [...]})``, each role takes from its
own queue. Every request is recorded (deep-copied) in ``.requests``. Tool-use
blocks without an id get one minted per model (``toolu_s_0001``, ...) when served.
Running out of script raises :class:`ScriptExhaustedError` unless ``default=`` is set.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import re
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias

from agents.models.base import ModelRequest, ModelResponse, ModelRole, TextSink, Usage

__all__ = ["ScriptExhaustedError", "ScriptStep", "ScriptedModel"]

ScriptFn: TypeAlias = Callable[[ModelRequest], "ModelResponse | Awaitable[ModelResponse]"]
ScriptStep: TypeAlias = "ModelResponse | ScriptFn | BaseException"


class ScriptExhaustedError(AssertionError):
    """The scripted model was called more times than it was scripted for."""


def _check_step(step: object) -> ScriptStep:
    if isinstance(step, ModelResponse | BaseException) or callable(step):
        return step
    raise TypeError(
        f"script step must be a ModelResponse, a callable or an exception, not {step!r}"
    )


def _chunks(text: str, count: int) -> list[str]:
    """``text`` split on word boundaries into at most ``count`` pieces (joined == text)."""
    words = re.findall(r"\s*\S+\s*|\s+", text)
    if len(words) <= 1 or count <= 1:
        return [text] if text else []
    size = -(-len(words) // count)
    return ["".join(words[i : i + size]) for i in range(0, len(words), size)]


class ScriptedModel:
    name = "scripted"

    def __init__(
        self,
        script: Sequence[ScriptStep] | Mapping[ModelRole, Sequence[ScriptStep]] = (),
        *,
        default: ModelResponse | ScriptFn | None = None,
        latency: float | Mapping[ModelRole, float] = 0.0,
        text_chunks: int = 3,
    ) -> None:
        self._shared: deque[ScriptStep] = deque()
        self._by_role: dict[ModelRole, deque[ScriptStep]] = {}
        if isinstance(script, Mapping):
            for role, steps in script.items():
                self.push(*steps, role=role)
        else:
            self.push(*script)
        self.default = default
        self.latency = latency
        self.text_chunks = text_chunks
        self.requests: list[ModelRequest] = []
        self._tool_seq = 0

    # -- building scripts --------------------------------------------------- #

    @staticmethod
    def text(
        text: str, *, stop_reason: str = "end_turn", usage: Usage | None = None, model: str = ""
    ) -> ModelResponse:
        """A plain text answer."""
        return ModelResponse(
            content=[{"type": "text", "text": text}],
            stop_reason=stop_reason,
            usage=usage or Usage(),
            model=model or "scripted",
        )

    @staticmethod
    def tool_calls(
        *calls: tuple[str, Mapping[str, Any]],
        text: str | None = None,
        usage: Usage | None = None,
        model: str = "",
    ) -> ModelResponse:
        """One or more tool calls (optionally after a text block).

        Ids are left ``None`` and minted by the model that serves the response.
        """
        if not calls:
            raise ValueError("tool_calls needs at least one (name, input) pair")
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content.extend(
            {"type": "tool_use", "id": None, "name": name, "input": dict(args)}
            for name, args in calls
        )
        return ModelResponse(
            content=content,
            stop_reason="tool_use",
            usage=usage or Usage(),
            model=model or "scripted",
        )

    def push(self, *steps: ScriptStep, role: ModelRole | None = None) -> None:
        """Append steps to the shared queue, or to ``role``'s own queue."""
        queue = self._shared if role is None else self._by_role.setdefault(role, deque())
        queue.extend(_check_step(step) for step in steps)

    # -- inspection --------------------------------------------------------- #

    @property
    def remaining(self) -> int:
        """Steps not yet played, over all queues."""
        return len(self._shared) + sum(len(q) for q in self._by_role.values())

    def assert_all_consumed(self) -> None:
        if self.remaining:
            raise AssertionError(f"ScriptedModel: {self.remaining} scripted step(s) unused")

    def requests_for(self, role: ModelRole) -> list[ModelRequest]:
        return [r for r in self.requests if r.role == role]

    # -- the call ----------------------------------------------------------- #

    async def create(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        self.requests.append(copy.deepcopy(request))
        step = self._next_step(request)
        delay = (
            self.latency.get(request.role, 0.0)
            if isinstance(self.latency, Mapping)
            else self.latency
        )
        if delay > 0:
            await asyncio.sleep(delay)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, ModelResponse):
            response = step
        else:
            result = step(request)
            response = await result if inspect.isawaitable(result) else result
            if not isinstance(response, ModelResponse):
                raise TypeError(f"script callable returned {response!r}, not a ModelResponse")
        response = self._serve(response)
        if on_text is not None:
            for block in response.content:
                if block.get("type") == "text":
                    for chunk in _chunks(block["text"], self.text_chunks):
                        await on_text(chunk)
        return response

    def _next_step(self, request: ModelRequest) -> ScriptStep:
        queue = self._by_role.get(request.role, self._shared)
        if queue:
            return queue.popleft()
        if self.default is not None:
            return self.default
        where = f"{request.role!r} queue" if request.role in self._by_role else "script"
        raise ScriptExhaustedError(
            f"ScriptedModel {where} is exhausted: call #{len(self.requests)} "
            f"(role {request.role!r}, user text {request.context.user_text[:80]!r}) "
            "has no scripted step left"
        )

    def _serve(self, response: ModelResponse) -> ModelResponse:
        """A private copy of ``response`` with tool-use ids minted where missing."""
        served = copy.deepcopy(response)
        for block in served.content:
            if block.get("type") == "tool_use" and not block.get("id"):
                self._tool_seq += 1
                block["id"] = f"toolu_s_{self._tool_seq:04d}"
        return served
