"""Where a Messages API request puts its prompt-cache breakpoints (``cache_control``).

The layout is tools, system, the earlier turns, then this turn's own messages; a
breakpoint on the system prompt caches the tools before it, one at the end of the
earlier turns is what the next turn re-reads, and two roll with this turn's newest user
messages (:func:`rolling_breakpoints`)."""

from __future__ import annotations

from typing import Any

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}

MAX_BREAKPOINTS = 4
"""The API's limit on ``cache_control`` blocks per request."""
MESSAGE_BREAKPOINTS = 2
"""Rolling breakpoints on this turn's own messages: its newest user message, and the one
before it.

With the system prompt's (which caches the tools before it too) and the end of the
earlier turns' that makes the API's maximum of 4. The newest one writes the turn so
far to the cache; the one before sits where the previous round's newest one was, so
the next round reads everything up to it even when a round added more than the API's
20-block lookback. The earlier turns' breakpoint is what the next turn reads: it sends
the same history again (grown by this turn's exchange, or trimmed in a block).
"""


def _marked(message: dict[str, Any]) -> dict[str, Any] | None:
    """``message`` with a breakpoint on its last block, or ``None`` if it has no block."""
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not blocks or (isinstance(content, str) and not content):
        return None
    return {**message, "content": [*blocks[:-1], {**blocks[-1], "cache_control": dict(EPHEMERAL)}]}


def rolling_breakpoints(
    messages: list[dict[str, Any]], history_messages: int = 0, *, limit: int = MESSAGE_BREAKPOINTS
) -> list[dict[str, Any]]:
    """``messages`` with cache breakpoints: on the last block of the earlier turns (the
    first ``history_messages``), and on the newest user messages after them, ``limit``
    breakpoints in all at most.

    Copies what it marks; the caller's messages are never modified.
    """
    out = list(messages)
    marked = 0
    end = min(history_messages, len(out))
    if end and limit:
        done = _marked(out[end - 1])
        if done is not None:
            out[end - 1] = done
            marked += 1
    rolling = min(MESSAGE_BREAKPOINTS, limit - marked)
    for index in range(len(out) - 1, end - 1, -1):
        if rolling <= 0:
            break
        if out[index].get("role") != "user":
            continue
        done = _marked(out[index])
        if done is not None:
            out[index] = done
            rolling -= 1
    return out
