"""Scripted replies of the fake Messages API: what the next ``/v1/messages`` call answers.

Each reply is a frozen dataclass; the helper functions build the common ones.
A reply may also be a callable taking the request body and returning a reply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

# HTTP status the real API uses for each error type.
ERROR_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

DEFAULT_MODEL_ECHO = "claude-fake"


# --------------------------------------------------------------------------- #
# Replies
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Text:
    """A text content block in a scripted reply."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A tool_use content block in a scripted reply.

    ``id`` is minted by the server (``toolu_fake_0001``, ...) when left ``None``.
    ``raw_json``, when set, is streamed verbatim as the ``input_json_delta``
    chunks instead of ``json.dumps(input)`` (used for malformed input).
    """

    name: str
    input: object = field(default_factory=dict)
    id: str | None = None
    raw_json: str | None = None


@dataclass(frozen=True)
class MessageReply:
    """A successful ``message`` response (streamed when the request asks for it)."""

    content: tuple[Text | ToolUse, ...]
    stop_reason: str | None = "end_turn"
    stop_sequence: str | None = None
    usage: Mapping[str, Any] | None = None
    """Overrides merged over the computed usage (e.g. ``{"output_tokens": 7}``)."""
    model: str | None = None
    """Model echoed in the response; defaults to the request's ``model``."""
    headers: Mapping[str, str] | None = None
    chunk_delay: float = 0.0
    """Seconds to sleep between SSE events when streaming."""


@dataclass(frozen=True)
class ErrorReply:
    """An API error response: ``{"type": "error", "error": {...}}``."""

    status: int
    error_type: str
    message: str = "fake server error"
    retry_after: float | None = None
    """Seconds; sent as ``retry-after-ms`` (which the SDK prefers) and ``retry-after``."""
    headers: Mapping[str, str] | None = None
    should_retry: bool | None = None
    """Sends ``x-should-retry: true|false``, which the SDK obeys over its status policy."""


@dataclass(frozen=True)
class DelayReply:
    """Sleep ``seconds`` before answering with ``then`` (to trigger client timeouts)."""

    seconds: float
    then: Reply


@dataclass(frozen=True)
class StreamErrorReply:
    """An ``event: error`` in the middle of an SSE stream (HTTP status already 200).

    For a non-streaming request it answers as a plain error response with the
    status that matches ``error_type``.
    """

    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    partial_text: str | None = None
    """Text streamed as a block before the error, if any."""


@dataclass(frozen=True)
class RawReply:
    """Any status/body/headers, verbatim (escape hatch for odd server behaviour)."""

    status: int
    body: bytes | str | Mapping[str, Any] | list[Any]
    headers: Mapping[str, str] | None = None


ReplyFn: TypeAlias = Callable[[dict[str, Any]], "Reply"]
Reply: TypeAlias = "MessageReply | ErrorReply | DelayReply | StreamErrorReply | RawReply | ReplyFn"


def text_reply(
    text: str,
    *,
    usage: Mapping[str, Any] | None = None,
    stop_reason: str = "end_turn",
    model: str | None = None,
    chunk_delay: float = 0.0,
) -> MessageReply:
    """A plain text answer. Streamed as one ``text_delta`` per word."""
    return MessageReply(
        content=(Text(text),),
        stop_reason=stop_reason,
        usage=usage,
        model=model,
        chunk_delay=chunk_delay,
    )


def tool_reply(
    *tool_uses: tuple[str, Mapping[str, Any]] | ToolUse,
    text: str | None = None,
    usage: Mapping[str, Any] | None = None,
    stop_reason: str = "tool_use",
    chunk_delay: float = 0.0,
) -> MessageReply:
    """One or more tool calls (optionally after a leading text block)."""
    if not tool_uses:
        raise ValueError("tool_reply needs at least one tool use")
    blocks: list[Text | ToolUse] = [Text(text)] if text is not None else []
    for item in tool_uses:
        if isinstance(item, ToolUse):
            blocks.append(item)
        else:
            name, args = item
            blocks.append(ToolUse(name=name, input=dict(args)))
    return MessageReply(
        content=tuple(blocks), stop_reason=stop_reason, usage=usage, chunk_delay=chunk_delay
    )


def malformed_tool_reply(
    name: str, raw_partial_json: str, *, text: str | None = None
) -> MessageReply:
    """A tool call whose input is not a JSON object.

    Streaming: the ``input_json_delta`` chunks concatenate to ``raw_partial_json``
    verbatim. Make it *syntactically* invalid (e.g. ``'{"keys": [}'``): the SDK
    parses the buffer with ``jiter`` in partial mode, so merely truncated JSON
    (``'{"keys": ["a"'``) is accepted as ``{"keys": ["a"]}``.

    Non-streaming: ``input`` is the string ``raw_partial_json`` instead of an object.
    """
    blocks: list[Text | ToolUse] = [Text(text)] if text is not None else []
    blocks.append(ToolUse(name=name, input=raw_partial_json, raw_json=raw_partial_json))
    return MessageReply(content=tuple(blocks), stop_reason="tool_use")


def error_reply(
    status: int,
    error_type: str,
    message: str = "fake server error",
    retry_after: float | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    should_retry: bool | None = None,
) -> ErrorReply:
    """An error response, e.g. ``error_reply(529, "overloaded_error", retry_after=0.01)``.

    Without ``retry_after`` the SDK falls back to exponential backoff
    (0.5 s * 2**n, jitter 0.75-1.0) between retries, which makes tests slow.
    """
    return ErrorReply(
        status=status,
        error_type=error_type,
        message=message,
        retry_after=retry_after,
        headers=headers,
        should_retry=should_retry,
    )


def rate_limit_reply(retry_after: float | None = 0.01, message: str = "Rate limited") -> ErrorReply:
    """429 ``rate_limit_error``."""
    return error_reply(429, "rate_limit_error", message, retry_after)


def overloaded_reply(retry_after: float | None = 0.01, message: str = "Overloaded") -> ErrorReply:
    """529 ``overloaded_error``."""
    return error_reply(529, "overloaded_error", message, retry_after)


def delay_reply(seconds: float, then: Reply) -> DelayReply:
    """Answer with ``then`` after ``seconds`` (the wait ends early if the server stops)."""
    return DelayReply(seconds=seconds, then=then)


def stream_error_reply(
    error_type: str = "overloaded_error",
    message: str = "Overloaded",
    *,
    partial_text: str | None = None,
) -> StreamErrorReply:
    """A stream that starts (HTTP 200) and then fails with an SSE ``error`` event."""
    return StreamErrorReply(error_type=error_type, message=message, partial_text=partial_text)


def raw_reply(
    status: int,
    body: bytes | str | Mapping[str, Any] | list[Any],
    headers: Mapping[str, str] | None = None,
) -> RawReply:
    """Any status and body, verbatim (dicts/lists are JSON-encoded)."""
    return RawReply(status=status, body=body, headers=headers)


def truncated_tool_reply(name: str, partial_json: str, *, text: str | None = None) -> MessageReply:
    """A tool call cut off by ``max_tokens``: its input JSON stops at ``partial_json``.

    The SDK's partial-JSON parser completes such input (``'{"keys": ["send"'``
    becomes ``{"keys": ["send"]}``), so only ``stop_reason`` tells it apart.
    """
    blocks: list[Text | ToolUse] = [Text(text)] if text is not None else []
    blocks.append(ToolUse(name=name, input={}, raw_json=partial_json))
    return MessageReply(content=tuple(blocks), stop_reason="max_tokens")


def refusal_reply(text: str = "") -> MessageReply:
    """The model declines: ``stop_reason: "refusal"`` with whatever text came before."""
    return MessageReply(content=(Text(text),) if text else (), stop_reason="refusal")


def empty_reply() -> MessageReply:
    """``end_turn`` with no content blocks at all."""
    return MessageReply(content=(), stop_reason="end_turn")


def context_exceeded_reply(prompt_tokens: int = 210_000, maximum: int = 200_000) -> ErrorReply:
    """400 for a prompt over the context window, worded as the API words it."""
    return ErrorReply(
        status=400,
        error_type="invalid_request_error",
        message=f"prompt is too long: {prompt_tokens} tokens > {maximum} maximum",
    )
