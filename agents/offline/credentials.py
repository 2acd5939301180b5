"""Attaching a credential to steps: "use the payer-portal credential for the http steps".

A request names a credential (``the X credential``, ``credential X``, ``credential
called X``, quoted or not) and the steps that run with it: by adaptor (``the http
steps``, ``every fhir step``, ``steps that use http``), every step (``all steps``), or
by name like any other command (``Get referrals and Check coverage``, ``this step``).
Phrasings: use/attach/apply/assign/set/give ... for/to/on ..., ``X should use
credential Y``, ``make X use credential Y``, ``set the credential of X to Y``. A
request that names no credential, or steps that match more than one way, asks and
changes nothing. One ``attach_credential`` call; the tool checks the name against the
project's credentials.
"""

from __future__ import annotations

import re

from agents.offline.adaptor_words import resolve_adaptor_word
from agents.offline.edits import resolve_many
from agents.offline.grammar import oxford, unquote
from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.references import Resolver
from agents.offline.view import View

# A name's words are never the words around it ("give A and B the X credential").
_WORD = r"(?!(?:the|and|a|an|to|for|of|on|in|with|use)\b)[^\s\"']+"
_NAME = rf"(?:\"[^\"]+\"|'[^']+'|{_WORD}(?:\s+{_WORD}){{0,4}}?)"
_CREDENTIAL = (
    r"(?:(?:the|a|an|our|my)\s+)?(?:"
    rf"credentials?\s+(?:called\s+|named\s+)?(?P<after>{_NAME})"
    rf"|(?P<before>{_NAME})\s+credentials?"
    r"|(?P<bare>credentials?)"
    r")"
)
_VERB = r"(?:use|attach|apply|assign|add|set|put|give)"
_PATTERNS = tuple(
    re.compile(source, re.I)
    for source in (
        rf"^set\s+(?:the\s+)?credentials?\s+(?:of|for|on)\s+(?P<target>.+?)\s+to\s+"
        rf"(?P<named>{_NAME})$",
        rf"^{_VERB}\s+{_CREDENTIAL}\s+(?:for|to|on|with|in|onto)\s+(?P<target>.+)$",
        rf"^give\s+(?P<target>.+?)\s+{_CREDENTIAL}$",
        rf"^make\s+(?P<target>.+?)\s+use\s+{_CREDENTIAL}$",
        rf"^(?P<target>.+?)\s+(?:should|must|shall|will|needs?\s+to|has\s+to)\s+"
        rf"(?:use|run\s+with|get|have)\s+{_CREDENTIAL}$",
    )
)
_ALL = re.compile(r"^(?:all|every|each)(?:\s+of)?\s+(?:the\s+)?(?:steps?|jobs?|them)$", re.I)
_BY_ADAPTOR = (
    re.compile(
        r"^(?:(?:the|all|every|each)\s+(?:(?:of\s+)?the\s+)?)?(?P<ad>[\w-]+)\s+"
        r"(?:steps?|jobs?|ones?)$",
        re.I,
    ),
    re.compile(
        r"^(?:(?:the|all|every|each)\s+(?:of\s+the\s+)?)?(?:steps?|jobs?|ones?)\s+"
        r"(?:that|which)?\s*(?:use|uses|on|using|with)\s+(?:the\s+)?(?P<ad>[\w-]+)"
        r"(?:\s+adaptor)?$",
        re.I,
    ),
)
_NO_NAME = frozenset({"a", "an", "the", "some", "my", "our", "one", "it", "that", "this"})


def _credential(match: re.Match[str]) -> str | None:
    for group in ("named", "after", "before"):
        value = match.groupdict().get(group)
        if value:
            name = unquote(value)
            return None if name.lower() in _NO_NAME else name
    return None


_NO_STEPS = re.compile(rf"^{_VERB}\s+{_CREDENTIAL}$", re.I)


def attach_credential(text: str, view: View, resolver: Resolver) -> Outcome | None:
    match = next((m for p in _PATTERNS if (m := p.match(text.strip()))), None)
    if match is None:
        alone = _NO_STEPS.match(text.strip())
        name = _credential(alone) if alone else None
        if name is None:
            return None
        return Reply(
            f'Which steps should use the "{name}" credential? Name them, or say e.g. "use '
            f'the {name} credential for the http steps". Nothing was changed.',
            asks=True,
        )
    name = _credential(match)
    target = match.group("target").strip()
    if name is None:
        return Reply(
            f"Which credential should {target} use? Say its name as the project has it, e.g. "
            f'"use the payer-portal credential for {target}". Nothing was changed.',
            asks=True,
        )
    if _ALL.match(target):
        keys = list(view.by_key)
        if not keys:
            return Reply("The workflow has no steps yet. Nothing was changed.")
        return Plan(
            [call("attach_credential", credential=name, job_keys=keys)],
            f'Attaching credential "{name}" to every step.',
        )
    for pattern in _BY_ADAPTOR:
        by = pattern.match(target)
        adaptor = resolve_adaptor_word(by.group("ad")) if by else None
        if adaptor is not None:
            return Plan(
                [call("attach_credential", credential=name, adaptor=adaptor)],
                f'Attaching credential "{name}" to the {adaptor} steps.',
            )
    keys = resolve_many(target, resolver)
    names = oxford([f'"{view.name_of(k)}"' for k in keys])
    return Plan(
        [call("attach_credential", credential=name, job_keys=keys)],
        f'Attaching credential "{name}" to {names}.',
    )
