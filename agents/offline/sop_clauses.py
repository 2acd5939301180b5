"""One clause of an SOP, read: the steps its verb phrases name, the condition it starts
with, and what a later "it"/"them" refers to (:mod:`.sop` reads whole texts with these)."""

from __future__ import annotations

import re

from agents.offline import sop_patterns as P
from agents.offline.adaptor_words import find_adaptor, named_adaptors
from agents.offline.conditions import Condition, parse_condition, require_clear
from agents.offline.grammar import VERBS, imperative, name_parts, split_actions
from agents.offline.layout import Step
from agents.offline.plausibility import inside_problem
from agents.offline.words import ARTICLES, PREPOSITIONS, PRONOUN_OBJECTS
from tools.document.names import derive_key


def names_step(subject: str, name: str) -> bool:
    """Whether a failure's subject ("the upload", "the lookup", "that") is about the step
    called ``name`` ("Upload patients", "Look up patient"): a word they share, stems alike."""
    if not name:
        return False
    said = content_words(subject) - {"step", "call", "request"}
    if not said:
        return True
    names = content_words(name)
    joined = "".join(re.findall(r"[a-z0-9]+", name.lower()))
    for word in said:
        if word in joined and len(word) >= 4:
            return True
        if any(word[:4] == other[:4] and min(len(word), len(other)) >= 4 for other in names):
            return True
        if word in names:
            return True
    return False


def make_steps(
    clause: str, *, split: bool = True, thing: str = "", left: list[str] | None = None
) -> list[Step]:
    """One step per verb phrase: 'pull the referral and check the insurance' is two.
    ``thing`` replaces the pronoun placeholder once the adaptor is chosen; words a name
    too long to keep whole leaves out go to ``left`` when they say more than where or
    what ("... and never emails the patient")."""
    steps: list[Step] = []
    for part in split_actions(clause) if split else [clause]:
        adaptor, rest = find_adaptor(part)
        name, _, overflow = name_parts(rest.replace(P.THING, thing or "it"))
        if left is not None and overflow and says_more(overflow):
            left.append(overflow)
        if name and re.search(r"[A-Za-z]", name):
            steps.append(Step(name, adaptor or "common", systems=named_adaptors(part)))
    return steps


def says_more(words: str) -> bool:
    """Whether words a long name leaves out say more than where or what ("by name and date
    of birth" does not; "and never emails the patient" does: a negation, a condition, a
    loop, or another action after "and")."""
    if inside_problem(words) is not None:
        return True
    after_and = re.findall(r"\band\s+(?:then\s+)?([A-Za-z]+)", words, re.I)
    return any(imperative(word).lower() in VERBS for word in after_and)


def same_name(a: str, b: str) -> bool:
    return derive_key(a) == derive_key(b)


def content_words(text: str) -> set[str]:
    skip = PREPOSITIONS | PRONOUN_OBJECTS | {*ARTICLES, "and", "of", "clinical"}
    found = {P.SYNONYMS.get(w, w) for w in re.findall(r"[a-z0-9]+", text.lower())}
    return {w for w in found if w not in skip}


def object_of(name: str) -> str:
    """'Fetch submissions from kobo' -> 'submissions' (what a later 'them' refers to)."""
    words = name.split()[1:]
    while words and words[0].lower() in P.PARTICLES:
        words = words[1:]
    kept: list[str] = []
    for word in words:
        if (
            word.lower() in PREPOSITIONS
            or word.lower() in PRONOUN_OBJECTS
            or word.lower() in P.CLAUSE_WORDS
        ):
            break
        kept.append(word)
    return " ".join(kept[:4])


def split_condition(text: str, hint: str | None) -> tuple[Condition | None, str]:
    """'it fails alert the team' -> (on failure, 'alert the team'); 'the plan is X' -> (js, '');
    'it is over 200 page the doctor' -> (js, 'page the doctor')."""
    whole = require_clear(parse_condition(text, hint))
    if whole is not None:
        return whole, ""
    words = text.split()
    for i in range(1, len(words)):
        head, tail = " ".join(words[:i]), " ".join(words[i:])
        condition = parse_condition(head, hint)
        if condition is None or not (make_steps(tail) or P.NOTHING.match(tail)):
            continue
        if condition.type in ("on_job_failure", "on_job_success"):
            return condition, tail
        if condition.type == "js_expression" and (starts_with_verb(tail) or P.NOTHING.match(tail)):
            return require_clear(condition), tail
    return None, text


def starts_with_verb(text: str) -> bool:
    first = text.split()[0] if text.split() else ""
    return imperative(first).lower() in VERBS | {"page"}


def subject_hint(previous_name: str) -> str | None:
    """What 'it' tests after a step: 'Check whether value is over 200' -> 'value';
    'Check insurance' -> 'insurance'; 'Pull up referral in Epic' -> 'referral'."""
    whether = P.WHETHER.search(previous_name)
    if whether:
        return whether.group("subject").lower()
    thing = object_of(previous_name)
    words = [w for w in thing.split() if len(w) > 2]
    return words[-1].lower() if words else None
