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
    "seventh": 7,
    "7th": 7,
    "eighth": 8,
    "8th": 8,
    "ninth": 9,
    "9th": 9,
    "tenth": 10,
    "10th": 10,
    "last": -1,
    "final": -1,
    "very last": -1,
    "very first": 1,
    "second to last": -2,
    "next to last": -2,
    "penultimate": -2,
    "last but one": -2,
    "third to last": -3,
}
_ORDINAL_WORDS = "|".join(
    re.escape(w).replace(r"\ ", r"[\s-]+") for w in sorted(_ORDINALS, key=len, reverse=True)
)
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
    why: str = ""
    """Why the phrase has no single step, when its words alone do not say ("the last
    step" in a workflow that ends in several steps)."""


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
        """ "step 3", "the second step", "the last step", "the second to last step": a
        position only where the flow gives it one. Counting from the start follows a single
        chain (one first step, and each step before the one asked for leads to exactly one
        step); "last" is the only last step, and counting back from it follows a single
        chain too. Where the flow branches (or ends) in several steps first, the reference
        is ambiguous: it asks with the steps it could mean, never picks the first found."""
        lowered = " ".join(text.lower().split())
        match = re.fullmatch(
            rf"(?:(?P<word>{_ORDINAL_WORDS})\s+(?:step|one|job)|(?:step|job)\s+(?:number\s+)?"
            rf"(?P<num>\d+)|(?P<bare>{_ORDINAL_WORDS}))",
            lowered,
        )
        if not match:
            return None
        number, word = match.group("num"), match.group("word") or match.group("bare")
        index = int(number) if number else _ORDINALS[re.sub(r"[\s-]+", " ", word or "")]
        if index == 0 or abs(index) > len(self.view.jobs):
            return Missing(text, ())
        if index > 0:
            return self._along(text, self._starts(), index, forward=True)
        return self._along(text, self.view.leaves(), -index, forward=False)

    def _starts(self) -> list[str]:
        """The first steps: those a trigger starts, else the steps nothing leads to."""
        view = self.view
        started = [e.target for t in view.trigger_keys for e in view.out_edges(t)]
        starts = started or [k for k in view.by_key if not view.in_edges(k)]
        return [k for k in dict.fromkeys(starts) if k in view.by_key]

    def _along(self, text: str, ends: list[str], count: int, *, forward: bool) -> Resolution:
        """The ``count``-th step from ``ends`` (the first steps, or the last ones going
        back) when a single chain leads there; else the steps it could be, to ask."""
        view = self.view
        level, why = ends, ""
        for _ in range(count - 1):
            if len(level) > 1 and not why:
                why = self._branches(level, ends, forward=forward)
            edges = [e for k in level for e in (view.out_edges(k) if forward else view.in_edges(k))]
            level = [
                k
                for k in dict.fromkeys(e.target if forward else e.source for e in edges)
                if k in view.by_key
            ]
        if not level:
            return Missing(text, ())
        if len(level) == 1 and not why:
            return Found(level[0])
        why = why or self._branches(level, ends, forward=forward)
        return Ambiguous(text, tuple(level), why)

    def _branches(self, level: list[str], ends: list[str], *, forward: bool) -> str:
        """Why a position has no single step: where the flow branches (or joins)."""
        names = ", ".join(f'"{self.view.name_of(k)}"' for k in level)
        if level == ends:
            which = "starts with" if forward else "ends in"
            return f"The workflow {which} several steps ({names})."
        view = self.view
        edges = [e for k in level for e in (view.in_edges(k) if forward else view.out_edges(k))]
        parents = list(dict.fromkeys(e.source if forward else e.target for e in edges))
        if len(parents) == 1 and parents[0] in view.by_key:
            where = "after" if forward else "into"
            what = "branches" if forward else "joins"
            return f'The workflow {what} {where} "{view.name_of(parents[0])}" ({names}).'
        return f"The workflow branches before that step ({names})."

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
        joined = ", ".join(options[:-1]) + f" or {options[-1]}" if len(options) > 1 else options[0]
        text = f'Which step do you mean by "{result.phrase}": {joined}? Nothing was changed.'
        if result.why:
            text += f" {result.why}"
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
