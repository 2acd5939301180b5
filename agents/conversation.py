"""The earlier turns every planner request starts with, whatever the mode.

Edit, question, errors, plan and project turns all send the session's history
the same way: trimmed in blocks (``agents.budget``), as alternating user and
assistant text, before the turn's own material (the structure or the project,
the user's message). The history comes first and changes only by growing or by
a block trim, so the next turn's request shares it as a cached prefix
(``ModelRequest.history_messages`` says where it ends).
"""

from __future__ import annotations

from typing import Any

from agents.budget import trim_history
from agents.tokens import TokenCounter

__all__ = ["Conversation", "earlier_turns"]


class Conversation:
    """Earlier turns, trimmed: as the request's first messages and as plain items."""

    def __init__(self, history: list[dict[str, Any]], messages: list[dict[str, Any]]):
        self.history = history
        """The trimmed history items (``{role, content}``), what the offline model reads."""
        self.messages = messages
        """The same as Messages API messages: alternating, starting with the user."""


async def earlier_turns(
    history: list[dict[str, Any]] | None, budget_tokens: int, counter: TokenCounter
) -> Conversation:
    trimmed = await trim_history(history or [], budget_tokens, counter)
    return Conversation(trimmed, history_messages(trimmed))


def history_messages(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Prior turns as alternating user/assistant text, starting with the user."""
    out: list[dict[str, Any]] = []
    for item in history:
        role, text = item.get("role"), item.get("content") or ""
        if role not in ("user", "assistant") or not text:
            continue
        if not out and role == "assistant":
            continue
        if out and out[-1]["role"] == role:
            out[-1] = {"role": role, "content": f"{out[-1]['content']}\n\n{text}"}
        else:
            out.append({"role": role, "content": text})
    if out and out[-1]["role"] == "user":
        out.pop()  # an unanswered message (e.g. a failed turn) would break alternation
    return out
