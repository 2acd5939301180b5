"""A scripted reply as the API would send it: a ``message`` object or its SSE events.

Output is bounded by the request's ``max_tokens`` like the real model's: a
reply longer than that is cut where the budget runs out (mid-text or inside a
tool call's input JSON) and ends with ``stop_reason: "max_tokens"``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from typing import Any

from tests.fakes.replies import MessageReply, StreamErrorReply, Text, ToolUse

__all__ = [
    "cut_to_budget",
    "message_events",
    "output_tokens",
    "stream_error_events",
    "tool_json",
]

CHARS_PER_TOKEN = 4
USAGE_FIELDS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def tool_json(block: ToolUse) -> str:
    if block.raw_json is not None:
        return block.raw_json
    return json.dumps(block.input, ensure_ascii=False)


def _chars(block: Text | ToolUse) -> int:
    if isinstance(block, Text):
        return len(block.text)
    return len(block.name) + len(tool_json(block))


def output_tokens(content: tuple[Text | ToolUse, ...]) -> int:
    return max(1, math.ceil(sum(_chars(b) for b in content) / CHARS_PER_TOKEN))


def cut_to_budget(reply: MessageReply, max_tokens: int) -> MessageReply:
    """``reply`` as a model limited to ``max_tokens`` output tokens would have sent it."""
    budget = max_tokens * CHARS_PER_TOKEN
    if sum(_chars(b) for b in reply.content) <= budget:
        return reply
    kept: list[Text | ToolUse] = []
    left = budget
    for block in reply.content:
        size = _chars(block)
        if size <= left:
            kept.append(block)
            left -= size
            continue
        if isinstance(block, Text):
            if left > 0:
                kept.append(Text(block.text[:left]))
        else:
            partial = tool_json(block)[: max(0, left - len(block.name))]
            kept.append(replace(block, input={}, raw_json=partial))
        break
    usage = {**(reply.usage or {}), "output_tokens": max_tokens}
    return replace(reply, content=tuple(kept), stop_reason="max_tokens", usage=usage)


def _split_words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def _split_json(text: str) -> list[str]:
    if not text:
        return []
    size = max(1, min(12, math.ceil(len(text) / 2)))
    return [text[i : i + size] for i in range(0, len(text), size)]


Event = tuple[str, dict[str, Any]]


def message_events(
    message: dict[str, Any],
    blocks: list[tuple[Text | ToolUse, dict[str, Any]]],
    reply: MessageReply,
) -> list[Event]:
    """The SSE sequence of a complete message (``message_start`` ... ``message_stop``)."""
    usage = message["usage"]
    start_usage = {**usage, "output_tokens": min(1, usage.get("output_tokens", 1))}
    start = {**message, "stop_reason": None, "stop_sequence": None, "usage": start_usage}
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, (block, wire) in enumerate(blocks):
        first: dict[str, Any]
        if isinstance(block, Text):
            first = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": w} for w in _split_words(block.text)]
        else:
            first = {**wire, "input": {}}
            chunks = ["", *_split_json(tool_json(block))]
            deltas = [{"type": "input_json_delta", "partial_json": c} for c in chunks]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": first},
            )
        )
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta_usage = {k: usage[k] for k in USAGE_FIELDS if k in usage}
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.stop_reason, "stop_sequence": reply.stop_sequence},
                "usage": delta_usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def stream_error_events(
    reply: StreamErrorReply,
    message: dict[str, Any],
    blocks: list[tuple[Text | ToolUse, dict[str, Any]]],
) -> list[Event]:
    """A stream that starts, maybe sends part of a text block, then an ``error`` event."""
    partial = MessageReply(content=tuple(b for b, _ in blocks), stop_reason=None)
    events = message_events(message, blocks, partial)[:-2]  # no message_delta / message_stop
    if reply.partial_text is not None:
        events = events[:-1]  # the block never finishes
    error = {"type": "error", "error": {"type": reply.error_type, "message": reply.message}}
    events.append(("error", error))
    return events
