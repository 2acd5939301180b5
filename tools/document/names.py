"""Display-name sanitisation, key derivation and did-you-mean hints."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from functools import lru_cache

from unidecode import unidecode

MAX_NAME_LENGTH = 100
MAX_KEY_LENGTH = 100
_NAME_DISALLOWED = re.compile(r"[^A-Za-z0-9 _-]+")
_SPACES = re.compile(r"\s+")
_KEY_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


@lru_cache(maxsize=8192)
def sanitise_name(raw: str) -> str:
    """ASCII letters, digits, space, ``_`` and ``-`` only; diacritics transliterated.

    Other characters become spaces, runs of spaces collapse. The caller checks
    emptiness and length (both are errors, never silent truncation).
    """
    ascii_text = unidecode(raw)
    cleaned = _NAME_DISALLOWED.sub(" ", ascii_text)
    return _SPACES.sub(" ", cleaned).strip()


@lru_cache(maxsize=8192)
def derive_key(name: str) -> str:
    """``"Check coverage"`` -> ``"check-coverage"``."""
    key = sanitise_name(name).lower().replace("_", "-").replace(" ", "-")
    key = re.sub(r"-{2,}", "-", key).strip("-")
    return key[:MAX_KEY_LENGTH].rstrip("-")


def is_valid_key(key: str) -> bool:
    return len(key) <= MAX_KEY_LENGTH and bool(_KEY_PATTERN.match(key))


def did_you_mean(wanted: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    pool = list(candidates)
    folded = {c.casefold(): c for c in pool}
    exact = folded.get(wanted.casefold())
    if exact is not None:
        return [exact]
    matches = difflib.get_close_matches(wanted.casefold(), list(folded), n=n, cutoff=0.5)
    return [folded[m] for m in matches]


def edge_key(source: str, target: str) -> str:
    return f"{source}->{target}"
