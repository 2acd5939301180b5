"""Edge commands: connect, disconnect, retarget, change when a step runs, enable or
disable an edge.

Conditions: "always", "on success", "on failure", "if X fails", "when <JS
expression>" and stated conditions ("when the plan is HMO").
"""

from __future__ import annotations

import re

from agents.offline.conditions import Condition, parse_condition, require_clear
from agents.offline.edits import resolve_pair, split_condition
from agents.offline.grammar import oxford, split_at
from agents.offline.plan import Outcome, Plan, Reply
from agents.offline.references import Found, NeedsAnswer, Resolver
from agents.offline.view import EdgeView, View, condition_words
from agents.offline.wiring import Graph, describe_edge

_DISCONNECT = [
    re.compile(r"^(?:disconnect|unlink|separate|unwire)\s+(?:between\s+)?(?P<body>.+)$", re.I),
    re.compile(
        r"^(?:remove|delete|drop|cut)\s+the\s+(?:edge|link|connection|path|arrow|line)\s+"
        r"(?:from\s+|between\s+)?(?P<body>.+)$",
        re.I,
    ),
]
_INSTEAD = [
    re.compile(
        r"^(?!(?:rename|relabel|retitle)\s)(?:make\s+|have\s+|let\s+)?(?P<a>.+?)\s+(?:should\s+)?"
        r"(?:go|goes|lead|leads|point|points"
        r"|flow|flows|connect|connects|continue|continues)\s+(?:on\s+)?(?:to|at|into)\s+"
        r"(?P<c>.+?)\s+instead\s+of\s+(?P<b>.+)$",
        re.I,
    ),
    re.compile(
        r"^(?:point|send|route|redirect|reroute|connect)\s+(?P<a>.+?)\s+(?:to|at)\s+(?P<c>.+?)\s+"
        r"instead\s+of\s+(?P<b>.+)$",
        re.I,
    ),
]
_RETARGET = re.compile(
    r"^(?:retarget|redirect|reroute|repoint|move|change)\s+the\s+(?:edge|link|connection|arrow)"
    r"\s+(?:from\s+)?(?P<body>.+)$",
    re.I,
)
_CONNECT = [
    (
        re.compile(r"^(?:connect|link|wire|join|chain|hook\s+up)\s+(?P<body>.+)$", re.I),
        r"to|->|→|with|and|into",
    ),
    (
        re.compile(
            r"^(?:add|create|draw)\s+(?:an?\s+|the\s+)?(?:edge|link|connection|arrow|path)\s+"
            r"(?:from\s+)?(?P<body>.+)$",
            re.I,
        ),
        r"to|->|→",
    ),
    (
        re.compile(
            r"^(?!(?:rename|relabel|retitle)\s)(?:make\s+|have\s+)?(?P<body>.+?\s+(?:should\s+)?"
            r"(?:go|goes|lead|leads|flow|flows"
            r"|continue|continues)\s+(?:on\s+)?(?:to|into)\s+.+)$",
            re.I,
        ),
        r"(?:should\s+)?(?:go|goes|lead|leads|flow|flows|continue|continues)\s+(?:on\s+)?(?:to|into)",
    ),
]
_RUN_AFTER = [
    re.compile(r"^(?:run|do|execute|call)\s+(?P<b>.+?)\s+after\s+(?P<a>.+)$", re.I),
    re.compile(r"^after\s+(?P<a>.+?),?\s+(?:run|do|execute|go\s+to)\s+(?P<b>.+)$", re.I),
]
_RUN_WHEN = [
    re.compile(
        r"^(?:only\s+)?(?:run|trigger|execute|start|fire)\s+(?P<b>.+?)(?P<cond>\s+(?:(?:only|solely"
        r"|exclusively)\s+)?(?:on|if"
        r"|when|whenever|in\s+case|upon|regardless|always|unconditionally|no\s+matter)\b.*)$",
        re.I,
    ),
    re.compile(
        r"^(?P<b>.+?)\s+should\s+(?:(?:only|solely|exclusively)\s+)?(?:run|happen|fire|execute)"
        r"(?P<cond>\s+.*)$",
        re.I,
    ),
]
# "Run B only if A fails": B runs on that path and no other.
_ONLY = re.compile(r"\b(?:only|solely|exclusively)\b", re.I)
_EDGE_CONDITION = re.compile(
    r"^(?:make|set|change|turn|update)\s+the\s+(?:edge|link|connection|condition|arrow)\s+"
    r"(?:from\s+|between\s+|on\s+the\s+edge\s+from\s+|of\s+the\s+edge\s+from\s+)?(?P<body>.+)$",
    re.I,
)
_TOGGLE = re.compile(
    r"^(?P<verb>enable|disable|turn\s+off|turn\s+on|deactivate|activate|pause|mute|unmute|resume)"
    r"\s+the\s+(?:edge|link|connection|arrow|path)\s+(?:from\s+|between\s+)?(?P<body>.+)$",
    re.I,
)


def disconnect(text: str, view: View, resolver: Resolver) -> Outcome | None:
    for rule in _DISCONNECT:
        match = rule.match(text)
        if not match:
            continue
        pair = resolve_pair(match.group("body"), r"from|and|to|->|→", resolver, triggers=True)
        if pair is None:
            return None
        a, b = pair
        graph = Graph(view)
        if (a, b) not in graph.edges and (b, a) in graph.edges:
            a, b = b, a
        if (a, b) not in graph.edges:
            return Reply(
                f"{view.label(a)} and {view.label(b)} are not connected. Nothing was changed."
            )
        description = describe_edge(view, a, b)
        del graph.edges[(a, b)]
        return Plan(graph.calls(), f"Removing the edge {description}.")
    return None


def retarget(text: str, view: View, resolver: Resolver) -> Outcome | None:
    triple: tuple[str, str, str] | None = None
    for rule in _INSTEAD:
        match = rule.match(text)
        if match:
            a = resolver.require(match.group("a"), triggers=True)
            triple = (a, resolver.require(match.group("b")), resolver.require(match.group("c")))
            break
    match = _RETARGET.match(text)
    if triple is None and match:
        body = re.sub(r"\s+so\s+(?:that\s+)?it\s+goes(?=\s+to\s)", "", match.group("body"))
        for left, right in split_at(body, "to"):
            a_key = resolver.try_key(left, triggers=True)
            if a_key is None:
                continue
            pair = resolve_pair(right, "to", resolver)
            if pair is not None:
                triple = (a_key, pair[0], pair[1])
                break
    if triple is None:
        return None
    a, b, c = triple
    graph = Graph(view)
    if (a, b) not in graph.edges:
        return Reply(
            f"There is no edge from {view.label(a)} to {view.label(b)}. Nothing was changed."
        )
    if (a, c) in graph.edges:
        return Reply(f"{view.label(a)} already leads to {view.label(c)}. Nothing was changed.")
    graph.edges[(a, c)] = graph.edges.pop((a, b))
    return Plan(graph.calls(), f"Pointing {view.label(a)} at {view.label(c)} instead.")


def connect(text: str, view: View, resolver: Resolver) -> Outcome | None:
    for rule, separator in _CONNECT:
        match = rule.match(text)
        if not match:
            continue
        body, condition = split_condition(match.group("body"))
        pair = resolve_pair(body, separator, resolver, triggers=True)
        if pair is None:
            continue
        return _connect(view, pair[0], pair[1], condition)
    for rule in _RUN_AFTER:
        match = rule.match(text)
        if not match:
            continue
        b_text, condition = split_condition(match.group("b"))
        a_text, condition2 = split_condition(match.group("a"))
        b = resolver.resolve(b_text)
        if not isinstance(b, Found):
            continue  # "run B only when the date is after X": not "run B after X"
        return _connect(
            view, resolver.require(a_text, triggers=True), b.key, condition or condition2
        )
    for rule in _RUN_WHEN:
        match = rule.match(text)
        if not match:
            continue
        b_result = resolver.resolve(match.group("b"))
        condition = parse_condition(match.group("cond"))
        if not isinstance(b_result, Found) or condition is None:
            continue
        if require_clear(condition) is None:
            continue
        said = text[: match.start("b")] + " " + text[match.end("b") :]
        only = bool(_ONLY.search(said))
        return _set_condition_into(view, resolver, b_result.key, condition, only=only)
    match = _EDGE_CONDITION.match(text)
    if match:
        body, condition = split_condition(match.group("body"))
        pair = resolve_pair(body, r"to|->|→|and", resolver, triggers=True)
        if pair is None or condition is None:
            return None
        return _connect(view, pair[0], pair[1], condition, must_exist=True)
    match = _TOGGLE.match(text)
    if match:
        pair = resolve_pair(match.group("body"), r"to|->|→|and", resolver, triggers=True)
        if pair is None:
            return None
        enabled = match.group("verb").lower() in (
            "enable",
            "turn on",
            "activate",
            "unmute",
            "resume",
        )
        graph = Graph(view)
        if pair not in graph.edges:
            raise NeedsAnswer(Reply(_no_edge(view, *pair)))
        fields = dict(graph.edges[pair])
        if fields.get("enabled", True) == enabled:
            return Reply(f"That edge is already {'enabled' if enabled else 'disabled'}.")
        fields["enabled"] = enabled
        graph.edges[pair] = fields
        verb = "Enabling" if enabled else "Disabling"
        return Plan(graph.calls(), f"{verb} the edge {describe_edge(view, *pair)}.")
    return None


def _runs_after(view: View, edges: list[EdgeView]) -> str:
    """'after "Check coverage" (on failure)', 'from the webhook trigger', joined with "and"."""
    parts = []
    for edge in edges:
        where = "from" if edge.source in view.trigger_keys else "after"
        parts.append(f"{where} {view.label(edge.source)} ({condition_words(edge)})")
    return oxford(parts)


def _only_asks(view: View, a: str, b: str, condition: Condition, others: list[EdgeView]) -> Reply:
    """ "Run B only if A fails" when B also runs after other steps: "only" would remove those
    edges, which the user did not name, so it asks (and says the commands for either)."""
    name_a, name_b = view.name_of(a), view.name_of(b)
    new = f"connect {name_a} to {name_b} {condition.words()}"
    cut = ", ".join(f"disconnect {view.name_of(e.source)} from {name_b}" for e in others)
    edges = "that edge" if len(others) == 1 else "those edges"
    return Reply(
        f'"{name_b}" already runs {_runs_after(view, others)}. "Only" {condition.words()} of '
        f'"{name_a}" would mean removing {edges}, so I changed nothing. To replace '
        f'{edges}, say "{cut}, then {new}"; to add this path and keep {edges}, say "{new}".',
        asks=True,
    )


def _no_edge(view: View, a: str, b: str) -> str:
    return f"There is no edge from {view.label(a)} to {view.label(b)}. Nothing was changed."


def _connect(
    view: View, a: str, b: str, condition: Condition | None, *, must_exist: bool = False
) -> Outcome:
    graph = Graph(view)
    if a == b:
        return Reply(f"{view.label(a)} can't lead to itself: workflows run forward only.")
    if (a, b) in graph.edges:
        if condition is None:
            return Reply(f"{describe_edge(view, a, b)} already exists; nothing changed.")
        fields = {**graph.fields_for(a, condition)}
        if "enabled" in graph.edges[(a, b)]:
            fields["enabled"] = graph.edges[(a, b)]["enabled"]
        if fields == graph.edges[(a, b)]:
            return Reply(f"{describe_edge(view, a, b)} already runs {condition.words()}.")
        graph.edges[(a, b)] = fields
        return Plan(graph.calls(), f"Changing {describe_edge(view, a, b)} to {condition.words()}.")
    if must_exist:
        raise NeedsAnswer(Reply(_no_edge(view, a, b)))
    if a in graph.triggers:
        for pair in graph.outs(a):
            del graph.edges[pair]
    graph.connect(a, b, graph.fields_for(a, condition))
    words = f" ({condition.words()})" if condition else ""
    return Plan(graph.calls(), f"Connecting {view.label(a)} to {view.label(b)}{words}.")


def _set_condition_into(
    view: View, resolver: Resolver, b: str, condition: Condition, *, only: bool = False
) -> Outcome:
    if condition.subject:
        a = resolver.require(condition.subject, triggers=True)
        others = [e for e in view.in_edges(b) if e.source != a]
        if only and others and a != b:
            return _only_asks(view, a, b, condition, others)
        return _connect(view, a, b, condition)
    sources = [e.source for e in view.in_edges(b) if e.source not in view.trigger_keys]
    if len(sources) == 1:
        return _connect(view, sources[0], b, condition)
    if not sources:
        return Reply(
            f'"{view.name_of(b)}" has no step before it, so there is nothing for the condition '
            f'to follow. Say e.g. "connect <step> to {view.name_of(b)} {condition.words()}". '
            "Nothing was changed.",
            asks=True,
        )
    names = " or ".join(f'"{view.name_of(s)}"' for s in sources)
    return Reply(
        f'"{view.name_of(b)}" follows several steps ({names}). Which edge should run '
        f"{condition.words()}? Nothing was changed.",
        asks=True,
    )


RULES = [disconnect, retarget, connect]
