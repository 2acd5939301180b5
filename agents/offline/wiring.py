"""Rewiring steps: insert, detach, move, connect -- computed on a copy of the edges and
turned into the smallest set of edge tool calls.

An edge that only changes its target (or source) becomes an ``update_edges``
retarget, which keeps its id and condition; the rest are ``remove_edges`` and
``add_edges``.
"""

from __future__ import annotations

from typing import Any

from agents.offline.conditions import SUCCESS, Condition
from agents.offline.plan import Call, Reply, call
from agents.offline.references import NeedsAnswer
from agents.offline.view import View, condition_words

Pair = tuple[str, str]
_FIELDS = ("condition_type", "condition_expression", "condition_label", "enabled")


class Graph:
    """The edges of a workflow as ``(source, target) -> condition fields``, in order."""

    def __init__(self, view: View) -> None:
        self.view = view
        self.triggers = set(view.trigger_keys)
        self.edges: dict[Pair, dict[str, Any]] = {}
        for e in view.edges:
            fields: dict[str, Any] = {"condition_type": e.condition_type}
            if e.expression is not None:
                fields["condition_expression"] = e.expression
            if e.label:
                fields["condition_label"] = e.label
            if not e.enabled:
                fields["enabled"] = False
            self.edges[(e.source, e.target)] = fields
        self.original = {pair: dict(fields) for pair, fields in self.edges.items()}

    def outs(self, node: str) -> list[Pair]:
        return [p for p in self.edges if p[0] == node]

    def ins(self, node: str) -> list[Pair]:
        return [p for p in self.edges if p[1] == node]

    def fields_for(self, source: str, condition: Condition | None) -> dict[str, Any]:
        if source in self.triggers:
            return {"condition_type": "always"}
        if condition is None:
            return dict(SUCCESS.args())
        return condition.args()

    def connect(self, source: str, target: str, fields: dict[str, Any]) -> None:
        if source == target:
            return
        if source in self.triggers:
            fields = {"condition_type": "always"}
        self.edges[(source, target)] = fields

    def detach(self, key: str) -> None:
        """Take a step out of its chain, joining its single parent to its single child."""
        ins, outs = self.ins(key), self.outs(key)
        if len(ins) == 1 and len(outs) == 1:
            source, target = ins[0][0], outs[0][1]
            if (source, target) not in self.edges and source != target:
                self.edges[(source, target)] = dict(self.edges[ins[0]])
        for pair in ins + outs:
            del self.edges[pair]

    # --- placing a step ---

    def place_after(self, new: str, anchor: str, condition: Condition | None = None) -> None:
        """Put ``new`` on ``anchor``'s main path: it takes over the one on-success (or
        always) edge out of ``anchor``; failure and JS branches stay where they are."""
        if condition is not None and condition.type != "on_job_success":
            self.connect(anchor, new, self.fields_for(anchor, condition))
            return
        outs = [
            p
            for p in self.outs(anchor)
            if p[1] != new and self.edges[p].get("condition_type") in ("on_job_success", "always")
        ]
        if len(outs) > 1:
            nexts = [f'"{self.view.name_of(p[1])}"' for p in outs]
            raise NeedsAnswer(
                Reply(
                    f'"{self.view.name_of(anchor)}" leads to several steps ({", ".join(nexts)}). '
                    f'Say which one the new step goes before (e.g. "between '
                    f'{self.view.name_of(anchor)} and {self.view.name_of(outs[0][1])}"), or '
                    'give a condition such as "on failure" to add it as a branch. '
                    "Nothing was changed.",
                    asks=True,
                )
            )
        if outs:
            target = outs[0][1]
            fields = self.edges.pop(outs[0])
            self.edges[(anchor, new)] = fields
            self.connect(new, target, dict(SUCCESS.args()))
        else:
            self.connect(anchor, new, self.fields_for(anchor, condition))

    def place_before(self, new: str, anchor: str) -> None:
        for pair in self.ins(anchor):
            if pair[0] == new:
                continue
            fields = self.edges.pop(pair)
            self.edges[(pair[0], new)] = fields
        self.connect(new, anchor, dict(SUCCESS.args()))

    def place_between(self, new: str, first: str, second: str) -> None:
        """Put ``new`` on the edge joining ``first`` and ``second`` (either way round): the
        edge now leads to ``new`` (keeping its condition), and ``new`` leads on. With no
        edge between them there is no spot between them: a path of its own beside theirs
        would be a guess, so it asks."""
        if (second, first) in self.edges and (first, second) not in self.edges:
            first, second = second, first
        pair = (first, second)
        if pair not in self.edges:
            raise NeedsAnswer(self._not_adjacent(new, first, second))
        fields = self.edges.pop(pair)
        self.edges[(first, new)] = fields
        self.connect(new, second, dict(SUCCESS.args()))

    def _not_adjacent(self, new: str, first: str, second: str) -> Reply:
        label = self.view.label
        step = label(new) if new in self.view.by_key else "the new step"
        path = self._path(first, second) or self._path(second, first)
        between = (
            " (" + " → ".join(label(k) for k in path) + ")"
            if path
            else ", and neither leads to the other"
        )
        return Reply(
            f"{label(first)} and {label(second)} are not connected to each other{between}, so "
            f"there is no spot between them for {step}. Say where it goes instead, e.g. "
            f'"after {self.view.name_of(first)}" or "before {self.view.name_of(second)}". '
            "Nothing was changed.",
            asks=True,
        )

    def _path(self, source: str, target: str) -> list[str] | None:
        """The nodes of the shortest path of edges from ``source`` to ``target``, if any."""
        paths: dict[str, list[str]] = {source: [source]}
        queue = [source]
        while queue:
            node = queue.pop(0)
            for _, nxt in self.outs(node):
                if nxt not in paths:
                    paths[nxt] = [*paths[node], nxt]
                    if nxt == target:
                        return paths[nxt]
                    queue.append(nxt)
        return None

    def place_at_end(self, new: str, leaves: list[str]) -> None:
        leaves = [k for k in leaves if k != new]
        if len(leaves) > 1:
            names = ", ".join(f'"{self.view.name_of(k)}"' for k in leaves)
            raise NeedsAnswer(
                Reply(
                    f"The workflow has several last steps ({names}). After which one should "
                    'the new step go? Say e.g. "add it after ..." . Nothing was changed.',
                    asks=True,
                )
            )
        if leaves:
            self.place_after(new, leaves[0])
        elif len(self.triggers) == 1 and not self.outs(next(iter(self.triggers))):
            self.connect(next(iter(self.triggers)), new, {"condition_type": "always"})

    # --- the calls that get from the original edges to these ---

    def calls(self) -> list[Call]:
        removed = [p for p in self.original if p not in self.edges]
        added = [p for p in self.edges if p not in self.original]
        changed = [
            p for p in self.edges if p in self.original and self.original[p] != self.edges[p]
        ]
        updates: list[dict[str, Any]] = []
        for pair in list(removed):
            fields = self.original[pair]
            match = next(
                (a for a in added if a[0] == pair[0] and self.edges[a] == fields), None
            ) or next((a for a in added if a[1] == pair[1] and self.edges[a] == fields), None)
            if match is None:
                continue
            removed.remove(pair)
            added.remove(match)
            item: dict[str, Any] = {"source": pair[0], "target": pair[1]}
            if match[1] != pair[1]:
                item["new_target"] = match[1]
            else:
                item["new_source"] = match[0]
            updates.append(item)
        for pair in changed:
            item = {"source": pair[0], "target": pair[1]}
            old, new = self.original[pair], self.edges[pair]
            for name in _FIELDS:
                if old.get(name) != new.get(name):
                    default: Any = True if name == "enabled" else ""
                    item[name] = new.get(name, default)
            if item.get("condition_expression") == "":
                del item["condition_expression"]
            updates.append(item)
        calls: list[Call] = []
        if removed:
            calls.append(
                call("remove_edges", edges=[{"source": s, "target": t} for s, t in removed])
            )
        if updates:
            calls.append(call("update_edges", edges=updates))
        if added:
            specs = [{"source": s, "target": t, **self.edges[(s, t)]} for s, t in added]
            calls.append(call("add_edges", edges=specs))
        return calls


def describe_edge(view: View, source: str, target: str) -> str:
    edge = view.edge(source, target)
    words = f" ({condition_words(edge)})" if edge else ""
    return f"{view.label(source)} → {view.label(target)}{words}"
