"""What a turn may send the model: the user's message length and the history's tokens.

Tokens are estimated as characters / 4 (the model's real count is only known
after the call); the estimate is for budgeting, never for billing.
"""

from __future__ import annotations

import math
from typing import Any

from tools.errors import PlanwrightError

__all__ = ["MessageTooLongError", "check_message", "estimate_tokens", "trim_history"]

TRIMMED = "\n[… the rest of this earlier message is left out to keep the conversation short]"


class MessageTooLongError(PlanwrightError):
    """The user's message is over ``max_message_chars``; nothing was sent to the model."""

    code = "message_too_long"


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def check_message(text: str, max_chars: int) -> None:
    """Raise :class:`MessageTooLongError` for a message over ``max_chars`` characters."""
    if len(text) > max_chars:
        raise MessageTooLongError(
            f"The message is {len(text):,} characters long; the limit is {max_chars:,}. "
            "Shorten it or split it over several messages.",
            length=len(text),
            limit=max_chars,
        )


def trim_history(history: list[dict[str, Any]], budget_tokens: int) -> list[dict[str, Any]]:
    """The newest messages of ``history`` that fit in ``budget_tokens``, oldest first.

    A single message over half the budget (one long answer, say) is cut to that
    half and marked, so it cannot crowd out every turn after it. Older messages
    are dropped whole; the first message that does not fit ends the walk back.
    """
    cap = max(1, budget_tokens // 2)
    kept: list[dict[str, Any]] = []
    used = 0
    for item in reversed(history):
        text = str(item.get("content") or "")
        if estimate_tokens(text) > cap:
            text = text[: cap * 4 - len(TRIMMED)] + TRIMMED
        cost = estimate_tokens(text)
        if used + cost > budget_tokens:
            break
        kept.append({**item, "content": text})
        used += cost
    kept.reverse()
    return kept
