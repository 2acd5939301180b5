"""Resolving what the user calls a step to its key.

A reference matches a step's display name or key, quoted or not, ignoring case,
punctuation, articles and the word "step". Failing an exact match it may
match part of a name ("coverage" -> "Check coverage") or, for typos, a close
spelling -- but only when exactly one step matches. Several matches are a
question back to the user, never a guess.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from agents.offline.grammar import norm, unquote
from agents.offline.plan import Reply
from agents.offline.view import View
from agents.offline.words import ARTICLES
from tools.document.names import did_you_mean

_NOISE = re.compile(
    r"^(?:the|a|an|my|our|this|that)\s+|^(?:step|job|node)\s+(?:called|named)\s+"
    r"|^(?:step|job)\s+(?=\S)|\s+(?:step|job|node)$|'s$",
    re.I,
)
_ORDINALS = {
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
    "fifth": 5,
    "5th": 5,
    "sixth": 6,
    "6th": 6,
    "last": -1,
    "final": -1,
}
_CURRENT = re.compile(r"^(?:it|this|this step|this one|the current step|current step|here)$", re.I)
_TRIGGER_WORDS = re.compile(
    r"^(?:the\s+)?(?:trigger|webhook|cron|schedule|timer)(?:\s+trigger)?$", re.I
)
# A reference that names no step at all: "the step", "that one", "it" (off a step's page).
_VAGUE = re.compile(
    r"^(?:(?:the|a|an|that|this|which|one|some|any|it|them)\s*)?(?:steps?|jobs?|nodes?|one)?$",
    re.I,
)
_FILLER = frozenset({*ARTICLES, "step", "job", "that", "which", "who", "one"})


def is_vague(phrase: str) -> bool:
    """True for a reference that names no step: "the step", "that one", "it"."""
    return bool(_VAGUE.match(phrase.strip()))


@dataclass(frozen=True)
class Found:
    key: str


@dataclass(frozen=True)
class Ambiguous:
    phrase: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class Missing:
    phrase: str
    suggestions: tuple[str, ...]


Resolution = Found | Ambiguous | Missing


class NeedsAnswer(Exception):
    """A parser cannot go on without asking or telling the user something."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.text)
        self.reply = reply


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _tokens(text: str) -> list[str]:
    return [_stem(w) for w in norm(text).split() if w not in _FILLER]


def _close(a: str, b: str) -> bool:
    if a == b:
        return True
    return min(len(a), len(b)) >= 3 and difflib.SequenceMatcher(None, a, b).ratio() >= 0.75


class Resolver:
    def __init__(self, view: View, current: str | None = None) -> None:
        self.view = view
        self.current = current if current in view.by_key else None

    def clean(self, phrase: str) -> str:
        text = unquote(phrase)
        previous = None
        while previous != text:
            previous = text
            text = _NOISE.sub("", text).strip()
        return unquote(text)

    def resolve(self, phrase: str, *, triggers: bool = False) -> Resolution:
        raw = unquote(phrase)
        text = self.clean(phrase)
        view = self.view
        if triggers and (raw in view.trigger_keys or _TRIGGER_WORDS.match(raw)):
            key = raw if raw in view.trigger_keys else None
            if key is None and len(view.trigger_keys) == 1:
                key = view.trigger_keys[0]
            if key is not None:
                return Found(key)
            return (
                Ambiguous(raw, tuple(view.trigger_keys)) if view.trigger_keys else Missing(raw, ())
            )
        if raw in view.by_key:
            return Found(raw)
        if _CURRENT.match(raw) and self.current:
            return Found(self.current)
        ordinal = self._ordinal(re.sub(r"^the\s+", "", raw, flags=re.I))
        if ordinal is not None:
            return ordinal
        if is_vague(raw) and view.jobs:
            keys = tuple(view.by_key)
            return Found(keys[0]) if len(keys) == 1 else Ambiguous(raw, keys)
        wanted = norm(text)
        if not wanted:
            return Missing(raw, ())
        for field in ("name", "key"):
            exact = [k for k, j in view.by_key.items() if norm(str(j[field])) == wanted]
            if len(exact) == 1:
                return Found(exact[0])
            if len(exact) > 1:
                return Ambiguous(raw, tuple(exact))
        tokens = _tokens(text)
        if not tokens:
            return Missing(raw, ())
        same: list[str] = []
        partial: list[str] = []
        fuzzy: list[str] = []
        for key, job in view.by_key.items():
            candidate = _tokens(str(job["name"]))
            key_tokens = _tokens(key)
            if set(tokens) in (set(candidate), set(key_tokens)):
                same.append(key)
            elif set(tokens) <= set(candidate) or set(tokens) <= set(key_tokens):
                partial.append(key)
            elif all(any(_close(t, c) for c in candidate) for t in tokens) or (
                len(tokens) == len(candidate)
                and difflib.SequenceMatcher(None, wanted, norm(str(job["name"]))).ratio() >= 0.85
            ):
                fuzzy.append(key)
        for group in (same, partial, fuzzy):
            if len(group) == 1:
                return Found(group[0])
            if len(group) > 1:
                return Ambiguous(raw, tuple(group))
        names = {str(j["name"]): k for k, j in view.by_key.items()}
        close = did_you_mean(text, list(names))
        return Missing(raw, tuple(names[n] for n in close))

    def _ordinal(self, text: str) -> Resolution | None:
        match = re.fullmatch(
            r"(?:(?P<word>\w+)\s+(?:step|one|job)|(?:step|job)\s+(?:number\s+)?(?P<num>\d+))",
            text.lower(),
        ) or re.fullmatch(r"(?P<word>first|last|final)", text.lower())
        if not match:
            return None
        groups = match.groupdict()
        number, word = groups.get("num"), groups.get("word")
        index = int(number) if number else _ORDINALS.get(word or "")
        if index is None:
            return None
        order = self.view.order()
        if not order or index > len(order) or index == 0:
            return Missing(text, ())
        return Found(order[index - 1] if index > 0 else order[index])

    def require(self, phrase: str, *, triggers: bool = False) -> str:
        """The key ``phrase`` refers to, or :class:`NeedsAnswer` with a question."""
        result = self.resolve(phrase, triggers=triggers)
        if isinstance(result, Found):
            return result.key
        raise NeedsAnswer(explain(result, self.view))

    def try_key(self, phrase: str, *, triggers: bool = False) -> str | None:
        result = self.resolve(phrase, triggers=triggers)
        return result.key if isinstance(result, Found) else None


def explain(result: Ambiguous | Missing, view: View) -> Reply:
    if isinstance(result, Ambiguous):
        options = [
            f'"{view.name_of(k)}" ({k})' if k in view.by_key else f"the {k} trigger"
            for k in result.keys
        ]
        joined = ", ".join(options[:-1]) + f" or {options[-1]}"
        text = f'Which step do you mean by "{result.phrase}": {joined}? Nothing was changed.'
        return Reply(text, asks=True, meta={"phrase": result.phrase, "keys": list(result.keys)})
    if not view.jobs:
        return Reply(f'There is no step called "{result.phrase}": the workflow has no steps yet.')
    hint = ""
    if result.suggestions:
        hint = " Did you mean " + " or ".join(f'"{view.name_of(k)}"' for k in result.suggestions)
        hint += "?"
    steps = ", ".join(f'"{j["name"]}"' for j in view.jobs)
    phrase = re.sub(r"^(?:the|a|an)\s+", "", result.phrase, flags=re.I)
    return Reply(
        f'There is no step called "{phrase}".{hint} The steps are: {steps}. Nothing was changed.',
        asks=True,
    )
