"""Adding, inserting and moving steps.

"add a step called Dedupe after Fetch", "insert Validate between A and B",
"add an alert step with gmail that runs if A fails" (a branch), "add X at the
start", "move A after B", "move A to the end". The edges are rewired on a copy
(:class:`~agents.offline.wiring.Graph`): the step takes over the edge it
is inserted into (keeping its condition) and leads on to the old target.
"""

from __future__ import annotations

import re

from agents.offline.adaptor_words import find_adaptor, resolve_adaptor_word
from agents.offline.edits import resolve_pair, split_condition
from agents.offline.grammar import (
    QUOTED,
    fit_name,
    name_note,
    split_at,
    step_name,
    unquote,
)
from agents.offline.moves import Spot, move_to
from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.plausibility import name_problem
from agents.offline.references import (
    Ambiguous,
    Found,
    Missing,
    NeedsAnswer,
    Resolver,
    explain,
)
from agents.offline.view import View
from agents.offline.wiring import Graph
from tools.document.names import derive_key

_ADD = re.compile(
    r"^(?:add|insert|create|put|append|include|plug\s+in|stick)\s+(?P<rest>.+)$"
    r"|^(?P<pos>after|before)\s+(?P<ref>.+?),\s*(?:add|insert|run|do|put)\s+(?P<what>.+)$",
    re.I,
)
_NOT_A_NEW_STEP = re.compile(
    r"^(?:an?\s+|the\s+)?(?:webhook|cron|schedule|scheduled|trigger|timer|edge|link|connection"
    r"|arrow|(?:some\s+|the\s+)?code)\b",
    re.I,
)
_POSITION = (
    r"(?:right\s+|just\s+|directly\s+|immediately\s+)?"
    r"(?:before|after|following|ahead\s+of|in\s+front\s+of|prior\s+to|behind)"
)
_AT_END = re.compile(
    r"\s+(?:at\s+the\s+(?P<where>end|start|beginning|top|bottom)|(?:as\s+the\s+)?"
    r"(?P<where2>first|last)(?:\s+step)?|to\s+the\s+(?P<where3>end|start))$",
    re.I,
)
_CALLED = re.compile(
    r"\b(?:called|named|titled)\s+(?P<name>\"[^\"]+\"|'[^']+'|.+?)"
    r"(?=\s+(?:with|using|via|through|that|which)\b|$)",
    re.I,
)


_GENERIC_NAMES = frozenset({"step", "job", "new step", "new job", "another step", "one", "it"})


def _is_before(separator: str) -> bool:
    return bool(re.search(r"\b(?:before|ahead|front|prior)\b", separator, re.I))


def new_step(what: str) -> tuple[str, str]:
    """(name, adaptor) of a step described as 'a step called X with http', 'a dedupe step',
    'a step to send an SMS with twilio', '"Dedupe"'."""
    name, adaptor, _ = typed_step(what)
    return name, adaptor


def typed_step(what: str) -> tuple[str, str, str | None]:
    """:func:`new_step`, and the name as the user typed it when they gave it (quoted, or
    "called X"); None when the name was read from what the step does."""
    typed = None
    adaptor, rest = find_adaptor(what)
    rest = rest.strip()
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
    elif called:
        name = typed = unquote(called.group("name"))
    else:
        bare = re.sub(r"^(?:an?\s+|another\s+|one\s+|the\s+)?(?:new\s+)?", "", rest, flags=re.I)
        doing = re.match(r"^(?:step|job)\s+(?:to|that|which|for|where)\s+(?P<do>.+)$", bare, re.I)
        noun = re.match(r"^(?P<name>.+?)\s+(?:step|job)$", bare, re.I)
        plain = re.match(r"^(?:step|job)\s+(?P<name>.+)$", bare, re.I)
        if doing:
            name = step_name(doing.group("do"))
        elif noun:
            name = noun.group("name").strip()
        elif plain:
            name = plain.group("name").strip()
        else:
            name = step_name(bare)
        name = name[:1].upper() + name[1:]
    name = fit_name(name) or name
    if adaptor is None:
        adaptor = find_adaptor(name)[0]
    return name, adaptor or "common", typed


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
    rest, condition = split_condition(rest)
    anchor: str | None = None
    where = "end"
    second: str | None = None
    what = rest
    between = list(split_at(rest, "between"))
    if between:
        what, pair_text = between[0]
        pair = resolve_pair(pair_text, "and", resolver)
        if pair is None:
            return None
        where, anchor, second = "between", pair[0], pair[1]
    else:
        position = None
        problem = None
        for left, right in split_at(rest, _POSITION):
            result = resolver.resolve(right)
            if isinstance(result, Found):
                position = (left, result.key, _is_before(rest[len(left) : len(rest) - len(right)]))
                break
            problem = problem or result
        if position is None and problem is not None:
            raise NeedsAnswer(explain(problem, view))
        if position is not None:
            what, anchor, before = position
            where = "before" if before else "after"
        else:
            end = _AT_END.search(rest)
            if end:
                what = rest[: end.start()]
                spot = (end.group("where") or end.group("where2") or end.group("where3")).lower()
                where = "start" if spot in ("start", "beginning", "top", "first") else "end"
    if condition is not None and condition.subject and anchor is None:
        anchor, where = resolver.require(condition.subject), "after"
    name, adaptor, typed = typed_step(what)
    if not name:
        return None
    doubt = None if QUOTED.search(what) or _CALLED.search(what) else name_problem(name)
    if doubt is not None:
        raise NeedsAnswer(
            Reply(
                f'I read the new step\'s name as "{name}", but {doubt}, so I changed nothing. '
                'Give the name in quotes, e.g. add a step called "Dedupe patients" after ...',
                asks=True,
            )
        )
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
    note = name_note(typed, name) if typed is not None else ""
    return Plan(calls, " ".join(p for p in (f'Adding "{name}".', note) if p))


_MOVE = re.compile(r"^(?P<verb>move|put|place|shift|reorder)\s+(?P<body>.+)$", re.I)


def move(text: str, view: View, resolver: Resolver) -> Outcome | None:
    """Move a step within a straight chain. A move that would drop or carry over a branch
    (a failure or JS edge, several edges in or out, a step moved below its own branch)
    changes nothing: it says why and exactly which edges the move would change."""
    match = _MOVE.match(text)
    if not match:
        return None
    body = match.group("body")
    strict = match.group("verb").lower() != "put" and match.group("verb").lower() != "place"

    def step(phrase: str) -> str | None:
        """The step being moved; asks when ambiguous (or unknown, for 'move')."""
        result = resolver.resolve(phrase)
        if isinstance(result, Found):
            return result.key
        if isinstance(result, Ambiguous) or strict:
            problems.append(result)
        return None

    problems: list[Ambiguous | Missing] = []
    end = _AT_END.search(body)
    if end:
        key = step(body[: end.start()])
        if key is None:
            return _unresolved(problems, view)
        spot = (end.group("where") or end.group("where2") or end.group("where3")).lower()
        if spot in ("start", "beginning", "top", "first"):
            return move_to(view, key, Spot("start"))
        return move_to(view, key, Spot("end"))
    for left, right in split_at(body, "between"):
        key = step(left)
        if key is not None:
            pair = resolve_pair(right, "and", resolver)
            if pair is None:
                return None
            return move_to(view, key, Spot("between", *pair))
    for left, right in split_at(body, _POSITION):
        key = step(left)
        if key is None:
            continue
        anchor = resolver.require(right)
        if anchor == key:
            return Reply("A step cannot be moved relative to itself. Nothing was changed.")
        before = _is_before(body[len(left) : len(body) - len(right)])
        graph = Graph(view)
        if (key, anchor) in graph.edges if before else (anchor, key) in graph.edges:
            where = "before" if before else "after"
            return Reply(
                f"{view.label(key)} already comes right {where} {view.label(anchor)}; "
                "nothing changed."
            )
        return move_to(view, key, Spot("before" if before else "after", anchor))
    return _unresolved(problems, view)


def _unresolved(problems: list[Ambiguous | Missing], view: View) -> Outcome | None:
    """Ask about the first reference that did not resolve; None when there was none."""
    if problems:
        raise NeedsAnswer(explain(problems[0], view))
    return None
