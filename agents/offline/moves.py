"""Moving a step (:func:`move` reads the request): "move A after B",
"before B", "between A and B", "to the start/end".

A move takes the step out of its chain (its parent joins its child) and puts it back in
at the new place, on a copy of the edges (:class:`~agents.offline.wiring.Graph`). That is
exact only for a straight chain: when the step or the place it goes to has a failure or
JS branch, several edges in or out, or the place is below the step through a branch or
join, the move would drop a condition or carry it onto another step. Then nothing changes:
the answer says why, which edges the move would change, and the commands that would.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agents.offline.edits import resolve_pair
from agents.offline.grammar import split_at
from agents.offline.plan import Outcome, Plan, Reply
from agents.offline.references import (
    Ambiguous,
    Found,
    Missing,
    NeedsAnswer,
    Resolver,
    explain,
)
from agents.offline.steps import AT_END, POSITION, is_before
from agents.offline.view import View
from agents.offline.wiring import Graph
from tools.document.structure import condition_text


@dataclass(frozen=True)
class Spot:
    """Where a step moves to: "start", "end", "before"/"after" ``anchor``, or "between"
    ``anchor`` and ``second``."""

    where: str
    anchor: str = ""
    second: str = ""


def move_to(view: View, key: str, spot: Spot) -> Outcome:
    doubts = _move_doubts(view, key, spot)
    graph = Graph(view)
    if doubts:
        try:
            _place(graph, view, key, spot)
        except NeedsAnswer:
            graph = Graph(view)  # it would ask anyway: say what makes the move unsafe
        return _refuse_move(graph, view, key, spot, doubts)
    outcome = _place(graph, view, key, spot)
    return outcome or _move_plan(graph, view, key)


def _place(graph: Graph, view: View, key: str, spot: Spot) -> Reply | None:
    """The move on ``graph`` (take the step out, join its parent to its child, put it in)."""
    graph.detach(key)
    if spot.where == "start":
        first = View({**view.raw, "edges": _edges_of(graph)}).first() or view.first()
        if first is None or first == key:
            return Reply(f'"{view.name_of(key)}" is already the first step.')
        graph.place_before(key, first)
    elif spot.where == "end":
        graph.place_at_end(key, View({**view.raw, "edges": _edges_of(graph)}).leaves())
    elif spot.where == "between":
        graph.place_between(key, spot.anchor, spot.second)
    elif spot.where == "before":
        graph.place_before(key, spot.anchor)
    else:
        graph.place_after(key, spot.anchor)
    return None


def _words(fields: dict[str, Any]) -> str:
    """An edge's condition in words ("on failure", "when BlueCross"; "disabled" too)."""
    words = condition_text(
        fields.get("condition_type", "always"),
        fields.get("condition_expression"),
        fields.get("condition_label"),
    )
    return words if fields.get("enabled", True) is not False else f"{words}, disabled"


def _plain(fields: dict[str, Any]) -> bool:
    """An enabled on-success (or always) edge: one a step can be moved along with."""
    return (
        fields.get("condition_type") in ("on_job_success", "always")
        and fields.get("enabled", True) is not False
    )


def _move_doubts(view: View, key: str, spot: Spot) -> list[str]:
    """Why moving ``key`` to ``spot`` would not be a plain reorder of a chain (none: it is)."""
    graph = Graph(view)
    doubts: list[str] = []

    def runs_after(pair: tuple[str, str]) -> str:
        words = _words(graph.edges[pair])
        return f"{view.label(pair[1])} runs after {view.label(pair[0])} {words}"

    def several(node: str, pairs: list[tuple[str, str]], out: bool) -> None:
        if len(pairs) > 1:
            keys = [p[1] if out else p[0] for p in pairs]
            what = "leads to" if out else "runs after"
            doubts.append(f"{view.label(node)} {what} several steps ({_names(view, keys)})")
        doubts.extend(runs_after(p) for p in pairs if not _plain(graph.edges[p]))

    ins, outs = graph.ins(key), graph.outs(key)
    several(key, ins, out=False)
    several(key, outs, out=True)
    if not outs and len(ins) == 1 and ins[0][0] not in graph.triggers:
        parent = ins[0][0]
        left = [p[1] for p in graph.outs(parent) if p[1] != key]
        if left:
            doubts.append(
                f"taking it out would leave {view.label(parent)} leading only to "
                f"{_names(view, left)}"
            )
    if doubts:
        return doubts
    moved = Graph(view)
    moved.detach(key)
    if spot.where == "after":
        several(spot.anchor, [p for p in graph.outs(spot.anchor) if p[1] != key], out=True)
    elif spot.where == "before":
        several(spot.anchor, [p for p in graph.ins(spot.anchor) if p[0] != key], out=False)
    elif spot.where == "between":
        a, b = spot.anchor, spot.second
        pair = (a, b) if (a, b) in moved.edges else (b, a)
        if key in (a, b):
            doubts.append(f"{view.label(key)} can't go between itself and another step")
        elif pair not in moved.edges:
            doubts.append(f"{view.label(a)} and {view.label(b)} are not next to each other")
        elif not _plain(moved.edges[pair]):
            doubts.append(runs_after(pair))
    elif spot.where == "end":
        # Several last steps: placing it asks which; one: it must not sit in a branch.
        leaves = [k for k in View({**view.raw, "edges": _edges_of(moved)}).leaves() if k != key]
        if len(leaves) == 1:
            doubts.extend(runs_after(p) for p in moved.ins(leaves[0]) if not _plain(moved.edges[p]))
    if spot.where in ("after", "before", "between") and not doubts:
        target = spot.anchor if spot.where != "between" else spot.second
        if _downstream(view, key, target) and not _straight(graph, key, target):
            doubts.append(
                f"{view.label(target)} comes after {view.label(key)} through a branch or a "
                "join, so the steps in between would lose their place"
            )
    return doubts


def _names(view: View, keys: list[str]) -> str:
    return ", ".join(view.label(k) for k in keys)


def _downstream(view: View, key: str, target: str) -> bool:
    seen, queue = set(), [e.target for e in view.out_edges(key)]
    while queue:
        node = queue.pop()
        if node == target:
            return True
        if node not in seen:
            seen.add(node)
            queue += [e.target for e in view.out_edges(node)]
    return False


def _straight(graph: Graph, key: str, target: str) -> bool:
    """Whether ``target`` is reached from ``key`` along one plain chain (every step on the
    way has one edge in and one plain edge out)."""
    node = key
    for _ in range(len(graph.edges) + 1):
        outs = graph.outs(node)
        if len(outs) != 1 or not _plain(graph.edges[outs[0]]):
            return False
        node = outs[0][1]
        if node == target:
            return True
        if len(graph.ins(node)) != 1:
            return False
    return False


def _refuse_move(graph: Graph, view: View, key: str, spot: Spot, doubts: list[str]) -> Reply:
    where = {"start": "to the start", "end": "to the end"}.get(spot.where, "")
    if spot.where in ("before", "after"):
        where = f"{spot.where} {view.label(spot.anchor)}"
    if spot.where == "between":
        where = f"between {view.label(spot.anchor)} and {view.label(spot.second)}"
    text = f"I didn't move {view.label(key)} {where}: {'; '.join(doubts)}."
    changes, commands = _edge_changes(graph, view)
    if changes:
        text += (
            " A move only reorders a straight chain; here it would rewire these edges: "
            + "; ".join(changes)
            + "."
        )
        if len(commands) <= 4:
            text += f' If that is what you want, say "{", then ".join(commands)}".'
    text += (
        ' I changed nothing. Or say which edges should change, e.g. "connect A to B on '
        'failure", "disconnect A from B".'
    )
    return Reply(text, asks=True)


def _edge_changes(graph: Graph, view: View) -> tuple[list[str], list[str]]:
    """What ``graph`` changes from the workflow's edges, in words and as commands."""
    changes: list[str] = []
    commands: list[str] = []

    def said(pair: tuple[str, str], fields: dict[str, Any]) -> str:
        return f"{view.label(pair[0])} → {view.label(pair[1])} ({_words(fields)})"

    def command_condition(fields: dict[str, Any]) -> str:
        if fields.get("condition_type") == "js_expression":
            return f"when {fields.get('condition_expression')}"
        return _words(fields)

    for pair, fields in graph.original.items():
        if pair not in graph.edges:
            changes.append(f"remove {said(pair, fields)}")
            commands.append(f"disconnect {view.name_of(pair[0])} from {view.name_of(pair[1])}")
    for pair, fields in graph.edges.items():
        old = graph.original.get(pair)
        if old is None:
            changes.append(f"add {said(pair, fields)}")
            commands.append(
                f"connect {view.name_of(pair[0])} to {view.name_of(pair[1])} "
                f"{command_condition(fields)}"
            )
        elif old != fields:
            changes.append(f"make {said(pair, old)} run {_words(fields)}")
            commands.append(
                f"make the edge from {view.name_of(pair[0])} to {view.name_of(pair[1])} "
                f"{command_condition(fields)}"
            )
    return changes, commands


def _edges_of(graph: Graph) -> list[dict[str, Any]]:
    return [{"source": s, "target": t, **f} for (s, t), f in graph.edges.items()]


def _move_plan(graph: Graph, view: View, key: str) -> Outcome:
    calls = graph.calls()
    if not calls:
        return Reply(f'"{view.name_of(key)}" is already there; nothing changed.')
    return Plan(calls, f'Moving "{view.name_of(key)}".')


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
    end = AT_END.search(body)
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
    for left, right in split_at(body, POSITION):
        key = step(left)
        if key is None:
            continue
        anchor = resolver.require(right)
        if anchor == key:
            return Reply("A step cannot be moved relative to itself. Nothing was changed.")
        before = is_before(body[len(left) : len(body) - len(right)])
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
