"""What the planner does with a reply that did not end normally (its ``stop_reason``).

* ``max_tokens`` inside a tool call: the SDK completes the partial JSON, so the
  call looks whole (a truncated ``remove_jobs {"keys": ["send"`` would remove a
  step). It is never run: the round is asked again once with
  ``AgentConfig.max_tokens_retry``; cut off again, the user is told.
* ``max_tokens`` in plain text: the text goes out with a note that it was cut.
* ``refusal``: the model's text, or a plain sentence, reaches the user; no
  tool call of that reply runs.
* ``model_context_window_exceeded``: the user is told the conversation is too long.
* ``end_turn`` with nothing in it: a sentence instead of an empty message.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from agents.models.base import ChatModel, ModelRequest, ModelResponse, ModelRole, TextSink
from agents.runtime import AgentConfig


class _Asks(Protocol):
    """A run's context that can ask the planner (``TurnRuntime``, ``PlanRuntime``)."""

    config: AgentConfig

    def model(self, role: ModelRole) -> ChatModel: ...


CUT_OFF_CALL = (
    "My reply was cut off at the length limit before I finished a change, so I did not "
    "make it. Nothing else was changed in that step; try asking for a smaller change."
)
CUT_OFF_TEXT = "(My answer was cut off at the length limit.)"
REFUSED = "I can't help with that request."
CONTEXT_FULL = (
    "This conversation has grown too long for the model to read in one go, so I stopped "
    "before changing anything else. Start a new session to continue."
)
EMPTY_AFTER_CHANGES = "I made the changes shown above."
EMPTY = "I have no answer to that. Could you say it another way?"


def _cut_call(response: ModelResponse) -> bool:
    return response.stop_reason == "max_tokens" and bool(response.tool_uses)


async def ask_planner(rt: _Asks, request: ModelRequest, on_text: TextSink) -> ModelResponse:
    """The planner's reply, asked once more with more room if a tool call was cut off.

    The retry streams its text only if the first attempt streamed none, so the
    user never sees the same words twice. (Each call's usage
    is recorded by ``rt.model``.)
    """
    streamed = False

    async def sink(chunk: str) -> None:
        nonlocal streamed
        streamed = True
        await on_text(chunk)

    model = rt.model("planner")
    response = await model.create(request, on_text=sink)
    room = rt.config.max_tokens_retry
    if _cut_call(response) and room > request.max_tokens:
        retry = replace(request, max_tokens=room)
        response = await model.create(retry, on_text=None if streamed else on_text)
    return response


def stop_text(response: ModelResponse, *, budget_spent: bool, changed: bool) -> str | None:
    """The user's reply when ``response`` must not be used as is, else ``None``."""
    text = response.text.strip()
    if _cut_call(response):
        return CUT_OFF_CALL
    if response.stop_reason == "max_tokens":
        return f"{text}\n\n{CUT_OFF_TEXT}" if text else CUT_OFF_CALL
    if response.stop_reason == "refusal":
        return text or REFUSED
    if response.stop_reason == "model_context_window_exceeded":
        return CONTEXT_FULL
    if not text and not response.tool_uses and not budget_spent:
        return EMPTY_AFTER_CHANGES if changed else EMPTY
    return None
