"""``stop_reason: "pause_turn"``: the API paused a long turn; the caller continues it.

The Messages API may stop a reply early with ``pause_turn`` (a server-side loop
reached its iteration limit). The reply is not finished: as the API's "handling
stop reasons" page says, the caller sends the paused assistant content back as
the last message, unchanged, and asks again; the model picks up where it
stopped. :class:`PauseContinuingModel` does that for every caller, so a paused
reply never ends a turn. Each continuation is its own call (recorded and priced
on its own by the model it wraps, and bounded by the turn's deadline there); the
caller gets one reply: every part's content in order, the last part's stop reason.
"""

from __future__ import annotations

from dataclasses import replace

from agents.models.base import ChatModel, ModelError, ModelRequest, ModelResponse, TextSink

__all__ = ["MAX_CONTINUATIONS", "PauseContinuingModel", "PauseLimitError"]

PAUSE_TURN = "pause_turn"
MAX_CONTINUATIONS = 8
"""Continuations of one reply; a model that keeps pausing past them is an error (the
turn's deadline normally ends such a loop first)."""


class PauseLimitError(ModelError):
    """The model paused its reply more often than :data:`MAX_CONTINUATIONS` allows."""

    code = "model_pause_limit"


class PauseContinuingModel:
    """A :class:`ChatModel` that continues replies paused with ``pause_turn``."""

    def __init__(self, inner: ChatModel, max_continuations: int = MAX_CONTINUATIONS) -> None:
        self.inner, self.max_continuations = inner, max_continuations
        self.name = inner.name

    async def create(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        response = await self.inner.create(request, on_text=on_text)
        content = list(response.content)
        usage = response.usage
        continued = 0
        while response.stop_reason == PAUSE_TURN:
            if continued == self.max_continuations:
                raise PauseLimitError(
                    f"The model paused its reply {continued + 1} times without finishing it",
                    role=request.role,
                    model=response.model,
                )
            continued += 1
            # The paused content goes back as is, as the conversation's last message.
            again = replace(
                request, messages=[*request.messages, {"role": "assistant", "content": content}]
            )
            response = await self.inner.create(again, on_text=on_text)
            content.extend(response.content)
            usage = usage + response.usage
        if not continued:
            return response
        return replace(response, content=content, usage=usage)
