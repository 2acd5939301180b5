"""``ApiTokenCounter``: budgets counted by the Messages API itself (``count_tokens``).

A text is counted as the one user message of a request to the planner's model,
less what the same request costs around a one-token text (the message framing),
so the counts of several texts add up to what they cost in a request. Counts are
kept by digest for the process (a history message is counted once, not on every
turn that sends it again). On Vertex AI the SDK posts to the platform's
``count-tokens:rawPredict`` with its ``anthropic_version``; Bedrock has no counting
endpoint (the factory counts locally there). When the endpoint fails the local BPE
count is used for that text and the failure is logged: a budget is an estimate, never
a bill.
"""

from __future__ import annotations

import logging

from agents.models.anthropic import AnthropicModel
from agents.models.providers import platform_options
from agents.tokens import CachedCounts, LocalTokenCounter, local_token_counter

__all__ = ["ApiTokenCounter"]

log = logging.getLogger(__name__)

_PROBE = "a"
"""A text of one token in every Claude tokenizer: its request's count less one is the
framing every counted request carries."""


class ApiTokenCounter:
    """Counts with ``client.messages.count_tokens`` on ``model``'s planner model id."""

    def __init__(self, model: AnthropicModel, *, fallback: LocalTokenCounter | None = None):
        self._model = model
        self._fallback = fallback or local_token_counter()
        self._counts = CachedCounts()
        self._framing: int | None = None
        self.name = f"messages.count_tokens ({model.model_for('planner')})"

    async def _request_tokens(self, text: str) -> int:
        client = self._model.client
        result = await client.messages.count_tokens(
            model=self._model.model_for("planner"),
            messages=[{"role": "user", "content": text}],
            **platform_options(client),
        )
        return int(result.input_tokens)

    async def count(self, text: str) -> int:
        if not text:
            return 0
        known = self._counts.get(text)
        if known is not None:
            return known
        try:
            if self._framing is None:
                self._framing = max(0, await self._request_tokens(_PROBE) - 1)
            counted = max(0, await self._request_tokens(text) - self._framing)
        except Exception as exc:  # an outage must not stop a turn: count it here instead
            log.warning("count_tokens failed (%s); counting locally", type(exc).__name__)
            return self._fallback.count_now(text)
        self._counts.put(text, counted)
        return counted
