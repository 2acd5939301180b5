"""Edit commands on existing steps: rename, change adaptor, remove; and the helpers the
other command modules share. Adding, inserting and moving steps live in :mod:`.steps`,
edges in :mod:`.connections`, triggers in :mod:`.schedule`.

Each rule either returns an outcome or None (not this rule). A reference that
is ambiguous or unknown raises :class:`NeedsAnswer`: the user is asked, nothing
is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agents.offline.adaptor_words import resolve_adaptor_word
from agents.offline.conditions import Condition, parse_condition, require_clear
from agents.offline.grammar import (
    QUOTED,
    fit_name,
    has_loose_quote,
    name_and_rest,
    name_note,
    oxford,
    split_at,
    unquote,
)
from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.plausibility import name_problem, placement_problem
from agents.offline.references import (
    Ambiguous,
    Found,
    Missing,
    NeedsAnswer,
    Resolver,
    explain,
    is_vague,
)
from agents.offline.view import View
from agents.offline.wiring import Graph
from tools.catalogue.adaptors import load_catalogue
from tools.document.names import derive_key

Rule = Callable[[str, View, Resolver], Outcome | None]
_COND_START = re.compile(
    r"\s*,?\s+(?:and\s+)?(?:(?:that|which)\s+(?:only\s+)?runs?\s+|to\s+|so\s+(?:that\s+)?it\s+runs"
    r"\s+|be\s+|running\s+)?(?=(?:only\s+)?(?:on|if|when|whenever|in\s+case|upon|always|regardless"
    r"|unconditionally|no\s+matter)(?![\w-]))",  # "on" but not "on-call"
    re.I,
)


def split_condition(text: str, hint: str | None = None) -> tuple[str, Condition | None]:
    """'A to B on failure' -> ('A to B', on failure)."""
    for match in _COND_START.finditer(text):
        condition = parse_condition(text[match.end() :], hint)
        if condition is not None and match.start() > 0:
            return text[: match.start()].strip(), require_clear(condition)
    return text, None


def resolve_pair(
    body: str, separator: str, resolver: Resolver, *, triggers: bool = False
) -> tuple[str, str] | None:
    """Two references separated by ``separator``; asks when they cannot be resolved."""
    first_problem = None
    for left, right in split_at(body, separator):
        a = resolver.resolve(left, triggers=triggers)
        b = resolver.resolve(right)
        if isinstance(a, Found) and isinstance(b, Found):
            return a.key, b.key
        if first_problem is None:
            first_problem = a if not isinstance(a, Found) else b
    if first_problem is not None and not isinstance(first_problem, Found):
        raise NeedsAnswer(explain(first_problem, resolver.view))
    return None


def resolve_many(body: str, resolver: Resolver) -> list[str]:
    """'A, B and C' -> keys (the whole phrase is tried as one name first)."""
    whole = resolver.resolve(body)
    if isinstance(whole, Found):
        return [whole.key]
    parts = [p for p in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*", body) if p.strip()]
    if len(parts) < 2:
        raise NeedsAnswer(explain(whole, resolver.view))
    return list(dict.fromkeys(resolver.require(p) for p in parts))


# --------------------------------------------------------------------------- rename

_RENAME_WORKFLOW = re.compile(
    r"^(?:rename|retitle|call|name)\s+(?:the|this)\s+workflow\s+(?:to\s+|as\s+)?(?P<name>.+)$"
    r"|^(?:change|set|update)\s+(?:the\s+)?workflow(?:'s)?\s+(?:name|title)\s+to\s+(?P<name2>.+)$"
    r"|^(?:change|set|update)\s+the\s+(?:name|title)\s+of\s+the\s+workflow\s+to\s+(?P<name3>.+)$",
    re.I,
)
_RENAME = re.compile(
    r"^(?:rename|relabel|retitle)\s+(?P<body>.+)$|^change\s+the\s+name\s+of\s+(?P<body2>.+)$",
    re.I,
)
_RENAME_KEY = re.compile(r"^(?:rename|change)\s+the\s+key\s+of\s+(?P<body>.+)$", re.I)
_CALL_INSTEAD = re.compile(r"^(?:call|name)\s+(?P<body>.+?)\s+instead$", re.I)


def rename(text: str, view: View, resolver: Resolver) -> Outcome | None:
    """A new name stops at a clause word unless quoted: what follows is left in
    ``Plan.rest`` for the planner (it must be a command of its own, or nothing changes)."""
    match = _RENAME_WORKFLOW.match(text)
    if match:
        raw = match.group("name") or match.group("name2") or match.group("name3")
        name, rest = name_and_rest(raw)
        fitted = fit_name(name) or name
        said = " ".join(p for p in ("Renaming the workflow.", name_note(name, fitted)) if p)
        return Plan([call("update_workflow", name=fitted)], said, rest)
    key_match = _RENAME_KEY.match(text)
    if key_match:
        for left, right in split_at(key_match.group("body"), "to"):
            key = resolver.try_key(left)
            if key:
                wanted, rest = name_and_rest(right)
                new_key = derive_key(wanted) or wanted
                return Plan(
                    [call("update_jobs", jobs=[{"key": key, "new_key": new_key}])], "", rest
                )
        return None
    match = _RENAME.match(text) or _CALL_INSTEAD.match(text)
    if not match:
        return None
    body = match.group("body") or match.group("body2")
    separator = r"to|as|into" if not _CALL_INSTEAD.match(text) else r"\S+"
    problem = None
    readings: list[tuple[Found | Ambiguous, str, str, str]] = []
    for left, right in split_at(body, separator):
        name, rest = name_and_rest(right)
        if not name or (has_loose_quote(name) and not QUOTED.match(right)):
            continue  # the name would be cut out of a quoted one
        name, typed = fit_name(name) or name, name
        result = resolver.resolve(left)
        if isinstance(result, Missing):
            problem = problem or result
        else:
            readings.append((result, name, rest, typed))
    if len(readings) > 1:
        raise NeedsAnswer(_which_rename(readings, view))
    if readings:
        result, name, rest, typed = readings[0]
        if isinstance(result, Ambiguous):
            raise NeedsAnswer(explain(result, view))
        old = view.name_of(result.key)
        _check_new_name(typed, body, old, rest)
        said = f'Renaming "{old}".'
        return Plan(
            [call("update_jobs", jobs=[{"key": result.key, "name": name}])],
            " ".join(p for p in (said, name_note(typed, name)) if p),
            rest,
        )
    if problem is not None:
        raise NeedsAnswer(explain(problem, view))
    return None


def _check_new_name(name: str, said: str, old: str, rest: str) -> None:
    """Ask, changing nothing, when an unquoted new name holds words a name does not ("Text
    patient without removing anything"), or when it is the name the step already has and
    words follow it ("Check coverage and eligibility": the rest was meant as the name)."""
    if QUOTED.search(said) is None:
        doubt = name_problem(name) or placement_problem(name)
        if doubt is not None:
            raise NeedsAnswer(
                Reply(
                    f'I read the new name as "{name}", but {doubt}, so I changed nothing. If '
                    f'that is the name, put it in quotes: rename {old} to "{name}".',
                    asks=True,
                )
            )
    if rest and " ".join(name.lower().split()) == " ".join(old.lower().split()):
        whole = f"{name} {rest}"
        raise NeedsAnswer(
            Reply(
                f'"{old}" is already called that, and I did not understand "{rest}", so I '
                f"changed nothing. If it is part of the new name, put the whole name in quotes: "
                f'rename {old} to "{whole}".',
                asks=True,
            )
        )


def _which_rename(readings: list[tuple[Found | Ambiguous, str, str, str]], view: View) -> Reply:
    """More than one split of "rename A to B" names a step: ask which was meant."""
    options = []
    for result, name, *_ in readings:
        old = (
            f'"{view.name_of(result.key)}"'
            if isinstance(result, Found)
            else oxford([f'"{view.name_of(k)}"' for k in result.keys], "or")
        )
        options.append(f'{old} to "{name}"')
    example = options[-1].replace('"', "'")
    return Reply(
        f"Do you mean renaming {oxford(options, 'or')}? Put the names in quotes to say which, "
        f'e.g. "rename {example}". Nothing was changed.',
        asks=True,
    )


# --------------------------------------------------------------------------- adaptors

_AD = r"(?:the\s+)?(?P<ad>@?[\w./-]+(?:@[\w.]+)?)(?:\s+adaptor)?"
_ADAPTOR_RULES = [
    re.compile(
        r"^(?:change|switch|set|make|convert|update)\s+(?P<body>.+?)\s+(?:to\s+use|so\s+(?:that"
        rf"\s+)?it\s+uses|over\s+to|to|use|uses)\s+{_AD}$",
        re.I,
    ),
    re.compile(rf"^(?:use|pick|choose)\s+{_AD}\s+(?:for|in|on)\s+(?P<body>.+)$", re.I),
    re.compile(rf"^(?P<body>.+?)\s+should\s+use\s+{_AD}$", re.I),
    re.compile(
        r"^(?:change|set|update|switch)\s+the\s+adaptor\s+(?:of|for|on|in)\s+(?P<body>.+?)\s+"
        rf"to\s+{_AD}$",
        re.I,
    ),
]
_CHANGE_TO = re.compile(r"^change\s+(?P<body>.+)$", re.I)


def change_adaptor(text: str, view: View, resolver: Resolver) -> Outcome | None:
    for rule in _ADAPTOR_RULES:
        match = rule.match(text)
        if not match:
            continue
        adaptor = resolve_adaptor_word(match.group("ad"))
        body = re.sub(r"^the\s+adaptor\s+(?:of|for|on|in)\s+", "", match.group("body"), flags=re.I)
        if adaptor is None:
            if not isinstance(resolver.resolve(body), Found):
                continue
            suggestions = load_catalogue().suggest(match.group("ad"))
            if not suggestions and not re.search(r"\badaptor\b|\buses?\b", text, re.I):
                continue
            hint = f" Did you mean {oxford(suggestions, 'or')}?" if suggestions else ""
            return Reply(
                f'I don\'t know an adaptor called "{match.group("ad")}".{hint} '
                "Nothing was changed.",
                asks=True,
            )
        keys = resolve_many(body, resolver)
        updates = [{"key": key, "adaptor": adaptor} for key in keys]
        names = oxford([f'"{view.name_of(k)}"' for k in keys])
        return Plan([call("update_jobs", jobs=updates)], f"Switching {names} to {adaptor}.")
    match = _CHANGE_TO.match(text)
    if match:
        for left, right in split_at(match.group("body"), "to"):
            key = resolver.try_key(left)
            if key:
                name = view.name_of(key)
                return Reply(
                    f'Do you want to rename "{name}" to "{unquote(right)}" (say "rename {name} '
                    f'to {unquote(right)}") or change its adaptor (say "change {name} to use '
                    'http")? Nothing was changed.',
                    asks=True,
                )
    return None


# --------------------------------------------------------------------------- remove

_REMOVE = re.compile(
    r"^(?:remove|delete|drop|get\s+rid\s+of|take\s+out|kill|erase|scrap|ditch|cut)\s+(?P<body>.+)$",
    re.I,
)
_NOT_A_STEP = re.compile(r"^(?:the\s+)?(?:trigger|schedule|cron|webhook|timer)\b", re.I)


def remove(text: str, view: View, resolver: Resolver) -> Outcome | None:
    match = _REMOVE.match(text)
    if not match:
        return None
    body = re.sub(r"\s+from\s+(?:the|this)\s+workflow$", "", match.group("body"), flags=re.I)
    named = re.sub(r"\s+(?:steps?|jobs?)$", "", body, flags=re.I)
    body = body if is_vague(named) else named
    if _NOT_A_STEP.match(body):
        return Reply(
            'I can\'t remove a trigger, only replace it ("use a webhook", "run it every day at '
            '9") or disable it ("disable the trigger"). Nothing was changed.'
        )
    keys = resolve_many(body, resolver)
    graph = Graph(view)
    for key in keys:
        graph.detach(key)
    bridges = [
        {"source": s, "target": t, **fields}
        for (s, t), fields in graph.edges.items()
        if (s, t) not in graph.original
    ]
    calls = [call("remove_jobs", keys=keys)]
    if bridges:
        calls.append(call("add_edges", edges=bridges))
    names = oxford([f'"{view.name_of(k)}"' for k in keys])
    return Plan(calls, f"Removing {names}.")


RULES: list[Rule] = [rename, change_adaptor, remove]
