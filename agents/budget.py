"""What a turn may send the model: the user's message and the earlier turns, in tokens.

Counts come from a :class:`~agents.tokens.TokenCounter`: the Messages API's own
``count_tokens`` with a key, a local BPE tokenizer without (``agents.tokens``).

The history is trimmed in blocks so that consecutive turns send the same
earlier messages, which the prompt cache can then read instead of writing them
again: it grows until it passes the budget (the high-water mark), and only then
are the oldest exchanges dropped, down to a quarter of it (the low-water mark).
Where the history starts is worked out from the history alone (the same walk
over the same messages gives the same start), so no state is kept between turns.
"""

from __future__ import annotations

from typing import Any

from agents.tokens import TokenCounter, count_all
from tools.errors import PlanwrightError

__all__ = ["LOW_WATER", "MessageTooLongError", "check_message", "trim_history"]

TRIMMED = "\n[… the rest of this earlier message is left out to keep the conversation short]"
LOW_WATER = 0.25
"""After a trim the history is at most this share of the budget.

The turn that trims writes the history it keeps to the cache anew (its prefix
changed): keeping a quarter keeps that turn's extra cost small (within ~15% of a
turn like it, ``bench/session_cost.py``), and the next trim is a budget's three
quarters of conversation away."""


class MessageTooLongError(PlanwrightError):
    """The user's message is over ``max_message_tokens``; nothing was sent to the model."""

    code = "message_too_long"


async def check_message(text: str, max_tokens: int, counter: TokenCounter) -> None:
    """Raise :class:`MessageTooLongError` for a message over ``max_tokens`` tokens."""
    # A byte-level BPE token covers at least one byte: a text of no more bytes than the
    # limit cannot be over it, and is not counted.
    if len(text.encode("utf-8", "surrogatepass")) <= max_tokens:
        return
    tokens = await counter.count(text)
    if tokens > max_tokens:
        raise MessageTooLongError(
            f"The message is {tokens:,} tokens long; the limit is {max_tokens:,}. "
            "Shorten it or split it over several messages.",
            length=tokens,
            limit=max_tokens,
        )


async def _cut(text: str, tokens: int, cap: int, counter: TokenCounter) -> tuple[str, int]:
    """``text`` cut to about ``cap`` tokens and marked, and its count."""
    marker = await counter.count(TRIMMED)
    keep = max(0, cap - marker)
    # Cut by the share of characters, then make sure by counting what is left.
    for _ in range(4):
        cut = text[: int(len(text) * keep / max(1, tokens))] + TRIMMED
        counted = await counter.count(cut)
        if counted <= cap:
            return cut, counted
        keep = max(0, keep - (counted - cap) - 1)
    return TRIMMED.lstrip("\n"), marker


def history_start(counts: list[int], roles: list[str], budget_tokens: int) -> int:
    """Index of the first message to send: the block trimming walked over the history
    as it grew, message by message. A trim stops only at a user message."""
    low = int(budget_tokens * LOW_WATER)
    start, total = 0, 0
    for index, count in enumerate(counts):
        total += count
        if total <= budget_tokens:
            continue
        while start <= index and (total > low or roles[start] != "user"):
            total -= counts[start]
            start += 1
    return start


async def trim_history(
    history: list[dict[str, Any]], budget_tokens: int, counter: TokenCounter
) -> list[dict[str, Any]]:
    """The messages of ``history`` to send, oldest first, within ``budget_tokens``.

    A single message over half the budget (one long answer, say) is cut to that
    half and marked, so it cannot crowd out every turn after it.
    """
    if budget_tokens <= 0 or not history:
        return []
    cap = max(1, budget_tokens // 2)
    texts = [str(item.get("content") or "") for item in history]
    counts = await count_all(counter, texts)
    items: list[dict[str, Any]] = []
    for item, text, count in zip(history, texts, counts, strict=True):
        if count > cap:
            text, count = await _cut(text, count, cap, counter)
        items.append({**item, "content": text})
        counts[len(items) - 1] = count
    roles = [str(item.get("role")) for item in items]
    return items[history_start(counts, roles, budget_tokens) :]
