"""Adding, inserting and moving steps.

"add a step called Dedupe after Fetch", "insert Validate between A and B",
"add an alert step with gmail that runs if A fails" (a branch), "add X at the
start", "move A after B", "move A to the end". The edges are rewired on a copy
(:class:`~agents.offline.wiring.Graph`): the step takes over the edge it
is inserted into (keeping its condition) and leads on to the old target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline import sop_patterns as P
from agents.offline.adaptor_words import find_adaptor, resolve_adaptor_word
from agents.offline.edits import resolve_pair, split_condition
from agents.offline.grammar import (
    QUOTED,
    VERBS,
    fit_name,
    imperative,
    name_note,
    named_step,
    norm,
    oxford,
    split_at,
    unquote,
)
from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.plausibility import name_problem, placement_problem
from agents.offline.references import (
    Found,
    NeedsAnswer,
    Resolver,
    explain,
)
from agents.offline.view import View
from agents.offline.wiring import Graph
from tools.catalogue.adaptors import load_catalogue
from tools.document.names import derive_key

_ADD = re.compile(
    r"^(?P<verb>add|insert|create|put|append|include|plug\s+in|stick)\s+(?P<rest>.+)$"
    r"|^(?P<pos>after|before)\s+(?P<ref>.+?),\s*(?:add|insert|run|do|put)\s+(?P<what>.+)$",
    re.I,
)
_NOT_A_NEW_STEP = re.compile(
    r"^(?:an?\s+|the\s+)?(?:(?:another|new|second|other|extra|one\s+more)\s+)?(?:webhook|cron"
    r"|schedule|scheduled|trigger|timer|edge|link|connection|arrow|(?:some\s+|the\s+)?code)\b",
    re.I,
)
POSITION = (
    r"(?:right\s+|just\s+|directly\s+|immediately\s+)?"
    r"(?:before|after|following|ahead\s+of|in\s+front\s+of|prior\s+to|behind)"
)
AT_END = re.compile(
    r"\s+(?:(?:right\s+)?at\s+the\s+(?:very\s+)?(?P<where>end|start|beginning|top|bottom)"
    r"|(?:as\s+)?(?:the\s+)?(?:very\s+)?(?P<where2>first|last)(?:\s+(?:step|one|job))?"
    r"|(?:right\s+)?to\s+the\s+(?:very\s+)?(?P<where3>end|start))$",
    re.I,
)
# "after A and before B" (either order): between the two.
_AFTER_AND_BEFORE = re.compile(
    r"^(?P<what>.+?)\s+(?P<first>after|before)\s+(?P<a>.+?),?\s+and\s+(?:right\s+)?"
    r"(?P<second>after|before)\s+(?P<b>.+)$",
    re.I,
)
_CALLED = re.compile(
    r"\b(?:called|named|titled)\s+(?P<name>\"[^\"]+\"|'[^']+'|.+?)"
    r"(?=\s+(?:with|using|via|through|that|which)\b|$)",
    re.I,
)
# What may follow a step's name: what it does ("that texts the patient").
_DESCRIBES = re.compile(r"^(?:that|which|to|for\s+(?:sending|fetching|checking))\b", re.I)
# "with the foobar adaptor": an adaptor named on purpose that the catalogue does not have.
_ADAPTOR_SAID = re.compile(
    r"\b(?:with|using|via|through|on|in)\s+(?:the\s+|an?\s+)?(?P<ad>@?[\w@./-]+)\s+"
    r"(?:adaptor|connector)\b",
    re.I,
)
# A thing of the workflow that is not a step: adding something "to" it changes it.
_NOT_A_STEP_THING = re.compile(
    r"^(?:the\s+|this\s+|that\s+|its\s+|our\s+|my\s+)?(?:(?:whole|entire)\s+)?(?:workflow|flow"
    r"|pipeline|webhook|trigger|schedule|cron|edge|connection|link|arrow|payload|request|response"
    r"|output|input|body"
    r"|message|query|code|it|them|(?:every|each|all)(?:\s+(?:the\s+)?(?:steps?|jobs?))?)\b",
    re.I,
)
# Where a thing is added to: "validation *to* transform data", "a copy *of* X".
_ONTO = r"to|into|in|on|onto|of|for|inside|within"


_GENERIC_NAMES = frozenset({"step", "job", "new step", "new job", "another step", "one", "it"})


def is_before(separator: str) -> bool:
    return bool(re.search(r"\b(?:before|ahead|front|prior)\b", separator, re.I))


@dataclass
class _Described:
    """A new step as the request describes it, and what of the words was not read."""

    name: str
    adaptor: str
    typed: str | None
    """The name as the user typed it (quoted, or "called X"); None when read from what the
    step does."""
    left: str = ""
    """Words the reading could not place: a clause the name ends before, words after a
    typed name."""
    credential: str | None = None
    credential_said: bool = False
    unknown_adaptor: str | None = None
    bare: str | None = None
    """The words the name was read from when there is no "step" in them ("validation to
    transform data"): they may name a change to something that exists, not a new step."""


def new_step(what: str) -> tuple[str, str]:
    """(name, adaptor) of a step described as 'a step called X with http', 'a dedupe step',
    'a step to send an SMS with twilio', '"Dedupe"'."""
    name, adaptor, _ = typed_step(what)
    return name, adaptor


def typed_step(what: str) -> tuple[str, str, str | None]:
    """:func:`new_step`, and the name as the user typed it when they gave it (quoted, or
    "called X"); None when the name was read from what the step does."""
    step = _describe(what)
    return step.name, step.adaptor, step.typed


def _describe(what: str) -> _Described:
    credential_name: str | None = None
    credential = P.CREDENTIAL.search(what)
    if credential:
        credential_name = P.credential_name(credential)
        what = (what[: credential.start()] + what[credential.end() :]).strip(" ,")
    typed = None
    left = ""
    bare_words = None
    adaptor, rest = find_adaptor(what)
    rest = rest.strip()
    unknown = None
    said = _ADAPTOR_SAID.search(rest)
    if said and adaptor is None and not resolve_adaptor_word(said.group("ad")):
        unknown = said.group("ad")
    lead = re.match(
        r"^(?:an?\s+|another\s+|one\s+|the\s+)?(?:new\s+)?(?P<ad>[\w@./-]+)\s+(?:step|job)\b",
        rest,
        re.I,
    )
    if lead and resolve_adaptor_word(lead.group("ad")):
        adaptor = adaptor or resolve_adaptor_word(lead.group("ad"))
        rest = rest[: lead.start("ad")] + rest[lead.end("ad") :]
    quoted = QUOTED.search(rest)
    called = _CALLED.search(rest)
    if quoted:
        name = typed = (quoted.group(1) or quoted.group(2)).strip()
        after = rest[quoted.end() :].strip(" ,")
        left = "" if not after or _DESCRIBES.match(after) else after
    elif called:
        name = typed = unquote(called.group("name"))
        after = rest[called.end() :].strip(" ,")
        left = "" if not after or _DESCRIBES.match(after) else after
    else:
        bare = re.sub(r"^(?:an?\s+|another\s+|one\s+|the\s+)?(?:new\s+)?", "", rest, flags=re.I)
        doing = re.match(r"^(?:step|job)\s+(?:to|that|which|for|where)\s+(?P<do>.+)$", bare, re.I)
        noun = re.match(r"^(?P<name>.+?)\s+(?:step|job)$", bare, re.I)
        plain = re.match(r"^(?:step|job)\s+(?P<name>.+)$", bare, re.I)
        if doing:
            name, left = named_step(doing.group("do"))
        elif noun:
            name = noun.group("name").strip()
        elif plain:
            name = plain.group("name").strip()
        else:
            name, left = named_step(bare)
            bare_words = rest
        name = name[:1].upper() + name[1:]
    name = fit_name(name) or name
    if adaptor is None:
        adaptor = find_adaptor(name)[0]
    if unknown and said and said.group(0) in left:
        left = ""
    return _Described(
        name,
        adaptor or "common",
        typed,
        left,
        credential_name,
        credential is not None,
        unknown,
        bare_words,
    )


def add(text: str, view: View, resolver: Resolver) -> Outcome | None:
    match = _ADD.match(text)
    if not match:
        return None
    if match.group("pos"):
        rest = f"{match.group('what')} {match.group('pos')} {match.group('ref')}"
    else:
        rest = match.group("rest")
    if _NOT_A_NEW_STEP.match(rest):
        return None
    if (match.group("verb") or "").lower() in ("put", "stick") and _existing_prefix(rest, view):
        # "put upsert records on hold": about a step that is there, not a new one.
        return None
    rest, condition = split_condition(rest)
    anchor: str | None = None
    where = "end"
    second: str | None = None
    what = rest
    between = list(split_at(rest, "between"))
    both = _AFTER_AND_BEFORE.match(rest)
    if between:
        what, pair_text = between[0]
        pair = resolve_pair(pair_text, "and", resolver)
        if pair is None:
            return None
        where, anchor, second = "between", pair[0], pair[1]
    elif both and both.group("first").lower() != both.group("second").lower():
        ends = [resolver.resolve(both.group("a")), resolver.resolve(both.group("b"))]
        keys = [found.key for found in ends if isinstance(found, Found)]
        for found in ends:
            if not isinstance(found, Found):
                raise NeedsAnswer(explain(found, view))
        if both.group("first").lower() != "after":
            keys.reverse()
        what, where, anchor, second = both.group("what"), "between", keys[0], keys[1]
    else:
        position = None
        problem = None
        for left, right in split_at(rest, POSITION):
            result = resolver.resolve(right)
            if isinstance(result, Found):
                position = (left, result.key, is_before(rest[len(left) : len(rest) - len(right)]))
                break
            problem = problem or result
        if position is None and problem is not None:
            raise NeedsAnswer(explain(problem, view))
        if position is not None:
            what, anchor, before = position
            where = "before" if before else "after"
        else:
            end = AT_END.search(rest)
            if end:
                what = rest[: end.start()]
                spot = (end.group("where") or end.group("where2") or end.group("where3")).lower()
                where = "start" if spot in ("start", "beginning", "top", "first") else "end"
    if condition is not None and condition.subject and anchor is None:
        anchor, where = resolver.require(condition.subject), "after"
    step = _describe(what)
    name, adaptor, typed = step.name, step.adaptor, step.typed
    if not name:
        return None
    _check(step, what, view, resolver)
    if name.lower() in _GENERIC_NAMES:
        raise NeedsAnswer(
            Reply(
                'What should the new step be called? Say e.g. "add a step called Dedupe '
                'patients after ..." (and "with http" to pick its adaptor). Nothing was changed.',
                asks=True,
            )
        )
    key = derive_key(name)
    graph = Graph(view)
    if condition is not None and condition.type != "on_job_success":
        if anchor is None:
            raise NeedsAnswer(
                Reply(f'After which step should "{name}" run {condition.words()}?', asks=True)
            )
        graph.place_after(key, anchor, condition)
    elif where == "between" and anchor and second:
        graph.place_between(key, anchor, second)
    elif where == "after" and anchor:
        graph.place_after(key, anchor)
    elif where == "before" and anchor:
        graph.place_before(key, anchor)
    elif where == "start" and view.first():
        graph.place_before(key, str(view.first()))
    else:
        graph.place_at_end(key, view.leaves())
    calls = [call("add_jobs", jobs=[{"name": name, "adaptor": adaptor}]), *graph.calls()]
    if step.credential:
        calls.append(call("attach_credential", credential=step.credential, job_keys=[key]))
    note = name_note(typed, name) if typed is not None else ""
    return Plan(calls, " ".join(p for p in (f'Adding "{name}".', note) if p))


def _check(step: _Described, what: str, view: View, resolver: Resolver) -> None:
    """Ask, changing nothing, when the words were not all read as one new step: a name that
    reads as a fragment or still holds where the step goes, words left over, an adaptor or
    a credential that could not be used, or a change to something that exists."""
    name = step.name
    if step.unknown_adaptor:
        suggestions = load_catalogue().suggest(step.unknown_adaptor)
        hint = f" Did you mean {oxford(suggestions, 'or')}?" if suggestions else ""
        raise NeedsAnswer(
            Reply(
                f'I don\'t know an adaptor called "{step.unknown_adaptor}".{hint} Nothing was '
                "changed.",
                asks=True,
            )
        )
    if step.credential_said and step.credential is None:
        raise NeedsAnswer(
            Reply(
                f'Which credential should "{name}" run with? Say its name, e.g. "add a step '
                f'called {name} with the payer-portal credential ...". Nothing was changed.',
                asks=True,
            )
        )
    quoted = QUOTED.search(what) is not None
    if step.typed is not None:
        doubt = None if quoted else placement_problem(name)
    else:
        doubt = name_problem(name) or placement_problem(name)
    if doubt is None and step.bare is not None:
        target = _existing_target(step.bare, view, resolver)
        if target is not None:
            raise NeedsAnswer(
                Reply(
                    f'"{step.bare}" reads as a change to {target}, not as a new step, so I '
                    'changed nothing. To change what a step does, ask for its code ("write the '
                    'code for <step> to ..."); to add a step, name it: add a step called '
                    '"..." after <step>.',
                    asks=True,
                )
            )
    if doubt is None and step.left:
        doubt = f'I could not place "{step.left}"'
        raise NeedsAnswer(
            Reply(
                f'I read the new step as "{name}", but {doubt}, so I changed nothing. Say it '
                'as one step, e.g. add a step called "Dedupe patients" after ..., and any '
                "condition as its own request.",
                asks=True,
            )
        )
    if doubt is not None:
        raise NeedsAnswer(
            Reply(
                f'I read the new step\'s name as "{name}", but {doubt}, so I changed nothing. '
                'Give the name in quotes, e.g. add a step called "Dedupe patients" after ...',
                asks=True,
            )
        )


def _existing_target(bare: str, view: View, resolver: Resolver) -> str | None:
    """What "<something> to|in|of <target>" adds to when the target is a step or a part of
    the workflow ("validation to transform data", "a copy of this workflow"), said for the
    question; None when the words add nothing to anything that exists."""
    head = re.sub(r"^(?:an?|the|some|any)\s+", "", bare.strip(), flags=re.I)
    first = head.split()[0] if head.split() else ""
    # A noun phrase ("a copy", "the facility code"), not an imperative name ("Send ..."):
    # what it is put into may be named loosely ("in the upsert").
    noun = head != bare.strip() or imperative(first).lower() not in VERBS
    for _, right in split_at(bare, _ONTO):
        thing = _NOT_A_STEP_THING.match(right)
        if thing:
            return f'"{right}"'
        key = _existing_prefix(right, view)
        if key is None and noun:
            found = resolver.resolve(right)
            key = found.key if isinstance(found, Found) else None
        if key is not None:
            return f'the step "{view.name_of(key)}"'
    return None


def _existing_prefix(phrase: str, view: View) -> str | None:
    """The step whose whole name (or key) ``phrase`` starts with: "upsert records on hold"
    -> upsert-records."""
    said = norm(re.sub(r"^(?:the|this|that)\s+", "", phrase.strip(), flags=re.I))
    said = re.sub(r"\s+(?:step|job)\b", "", said)
    for job in view.jobs:
        for known in (norm(str(job["name"])), norm(str(job["key"]))):
            if known and (said == known or said.startswith(known + " ")):
                return str(job["key"])
    return None
