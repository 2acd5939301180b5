"""What the fake knows about each model: limits, minimum cacheable prefix, lifecycle.

The ids are the installed SDK's own list (the ``anthropic.types.Model`` literal);
retirement dates are the SDK's ``DEPRECATED_MODELS`` table (end of life on that
date). Limits follow Anthropic's model and prompt-caching pages as of the SDK's
release; for lines those pages did not cover yet the fake takes the strictest
value of the line's newest documented model. An id outside the list, or past
its end-of-life date, answers 404 ``not_found_error`` like the real API.
"""

from __future__ import annotations

import datetime as dt
import re
import typing
from dataclasses import dataclass

import anthropic.types
from anthropic.resources.messages.messages import DEPRECATED_MODELS

__all__ = ["FakeModel", "known_models", "lookup"]

CONTEXT_WINDOW = 200_000


@dataclass(frozen=True)
class FakeModel:
    id: str
    max_tokens: int
    """The largest ``max_tokens`` the model accepts."""
    context_window: int
    """Input tokens (system + tools + messages) the model accepts."""
    min_cache_tokens: int
    """Shortest prefix a breakpoint caches; shorter prefixes are silently not cached."""
    retires_on: dt.date | None = None


# (id pattern, max output tokens, minimum cacheable prefix)
_LIMITS: tuple[tuple[str, int, int], ...] = (
    (r"claude-opus-4-5", 64_000, 4096),
    (r"claude-opus-4-6", 128_000, 4096),
    (r"claude-opus-4-7", 128_000, 2048),
    (r"claude-opus-4-8", 128_000, 1024),
    (r"claude-haiku-4-5", 64_000, 4096),
    (r"claude-sonnet-4-5", 64_000, 1024),
    (r"claude-sonnet-4-6", 64_000, 2048),
    (r"claude-(opus|fable|mythos)-5", 128_000, 512),
    (r"claude-sonnet-5", 64_000, 1024),
    (r"claude-haiku-5", 64_000, 4096),
    (r"claude-mythos-preview", 128_000, 512),
)


def _eol(text: str) -> dt.date:
    """``"November 30th, 2026"`` -> a date."""
    cleaned = re.sub(r"(\d+)(st|nd|rd|th)", r"\1", text)
    return dt.datetime.strptime(cleaned, "%B %d, %Y").date()


def _sdk_ids() -> list[str]:
    return [
        arg
        for member in typing.get_args(anthropic.types.Model)
        for arg in typing.get_args(member)
        if isinstance(arg, str)
    ]


def known_models() -> dict[str, FakeModel]:
    out: dict[str, FakeModel] = {}
    for model_id in _sdk_ids():
        limits = next(((m, c) for p, m, c in _LIMITS if re.match(p, model_id)), (64_000, 4096))
        eol = DEPRECATED_MODELS.get(model_id)
        out[model_id] = FakeModel(
            id=model_id,
            max_tokens=limits[0],
            context_window=CONTEXT_WINDOW,
            min_cache_tokens=limits[1],
            retires_on=_eol(eol) if eol else None,
        )
    return out


_KNOWN = known_models()


def lookup(model_id: object, today: dt.date | None = None) -> FakeModel | None:
    """The model, or ``None`` when the API would answer 404 (unknown or retired)."""
    if not isinstance(model_id, str):
        return None
    model = _KNOWN.get(model_id)
    if model is None:
        return None
    if model.retires_on is not None and (today or dt.date.today()) >= model.retires_on:
        return None
    return model
