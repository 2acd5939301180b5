"""Review mode's staleness check (DESIGN §5c): whether an accepted change, replayed on a
head another editor moved, is still the change the proposal showed on its base.

A change is compared with itself: as applied on the base (the structures before and
after it there) and as applied on the head. It is stale when it reads or writes an
entry the other editor changed (a step, connection or trigger; the steps a removal or
disconnection stops count as read), unless both made the same change; when its impact
on the head is bigger than on the base; or when on the head it would touch other
entries (removing a step someone connected a new step after also removes that
connection). Entries are followed across versions by id (by key without one).
Pure functions over :class:`~tools.document.structure.Structure`;
:func:`agents.review.replay` calls :func:`stale_reason` for each accepted change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tools.document.impact import Impact, TriggerRef
from tools.document.impact import impact as impact_of
from tools.document.structure import SECTIONS, Edge, Entry, Job, Structure, Trigger


@dataclass(frozen=True)
class Step:
    """One change as applied: the draft entry and the structure before and after it."""

    entry: dict[str, Any]
    before: Structure
    after: Structure


Ident = tuple[str, str]
"""An entry across versions: its section and its id (``key:<key>`` without one); the
workflow's name is ``("workflow", "name")``."""
_NAME: Ident = ("workflow", "name")


def _ident(section: str, entry: Entry) -> Ident:
    return (section, str(entry.id) if entry.id is not None else f"key:{entry.key}")


def _entries(structure: Structure) -> dict[Ident, Entry]:
    return {
        _ident(section, entry): entry
        for section in SECTIONS
        for entry in structure.section(section).values()
    }


def changed_entries(before: Structure, after: Structure) -> set[Ident]:
    """The entries added, removed or changed in any field (a new key included) from
    ``before`` to ``after``, and the name when it changed."""
    old, new = _entries(before), _entries(after)
    out = {i for i in old.keys() | new.keys() if old.get(i) != new.get(i)}
    if before.name != after.name:
        out.add(_NAME)
    return out


def _node(structure: Structure, key: str) -> Ident | None:
    """A step's or a trigger's entry by its key in ``structure``."""
    if key in structure.jobs:
        return _ident("jobs", structure.jobs[key])
    if key in structure.triggers:
        return _ident("triggers", structure.triggers[key])
    return None


def _touched(step: Step) -> set[Ident]:
    """What a change reads or writes: the entries it changes, the ends of each
    connection it adds, removes or changes, and the steps it stops from running."""
    written = changed_entries(step.before, step.after)
    out = set(written)
    for structure in (step.before, step.after):
        by_ident = {_ident("edges", e): e for e in structure.edges.values()}
        for ident in written:
            edge = by_ident.get(ident)
            if edge is not None:
                out |= {
                    n
                    for n in (_node(structure, edge.source), _node(structure, edge.target_job))
                    if n is not None
                }
    for ref in impact_of(step.before, step.after).unreachable_steps:
        node = _node(step.after, ref.key)
        if node is not None:
            out.add(node)
    return out


def _impact_marks(step: Step, impact: Impact) -> set[tuple[Any, ...]]:
    """An impact by the entries it is about (not their names, which may differ)."""

    def before(key: str) -> Ident | str:
        return _node(step.before, key) or key

    def after(key: str) -> Ident | str:
        return _node(step.after, key) or key

    def trigger(ref: TriggerRef) -> Ident | str:
        return before(ref.key)

    return (
        {("removed", before(s.key)) for s in impact.removed_steps}
        | {("removed", trigger(t)) for t in impact.removed_triggers}
        | {("type", trigger(c.trigger), c.new_type) for c in impact.trigger_type_changes}
        | {("stops", after(s.key)) for s in impact.unreachable_steps}
        | {
            ("disconnects", after(e.source), after(e.target), e.goes_to is None)
            for e in impact.removed_edges
        }
        | {("disables", after(e.source), after(e.target)) for e in impact.disabled_edges}
    )


def stale_reason(was: Step, now: Step, others: set[Ident], head: Structure) -> str:
    """Why a change applied on the moved head (``now``) is not the change the proposal
    showed on its base (``was``); '' when it is. ``others``: what the other editor
    changed from the base to the ``head``."""
    touched = _touched(was)
    base_after = _entries(was.after)
    head_entries = _entries(head)
    # Both made the same change (the same code, say): nothing of theirs is lost, and on
    # the head the change has nothing left to do there.
    agreed = {
        i
        for i in touched & others
        if (head.name == was.after.name if i == _NAME else head_entries.get(i) == base_after.get(i))
    }
    clash = sorted(touched & others - agreed)
    if clash:
        what = _names(clash, now.before, was.before)
        return f"someone else changed {what} meanwhile."
    now_here = "on the workflow as it is now it would"
    shown, there = impact_of(was.before, was.after), impact_of(now.before, now.after)
    if _impact_marks(now, there) - _impact_marks(was, shown):
        new = [s for s in there.sentences if s not in shown.sentences] or there.sentences
        return f"{now_here} do more than its impact said: {' '.join(new)}"
    on_head = _touched(now)
    extra = sorted(on_head - touched)
    if extra:
        return f"{now_here} also {_what_it_does(now, extra)}."
    missing = sorted(touched - on_head - agreed)
    if missing:
        return f"{now_here} not change {_names(missing, was.after, was.before)}."
    return ""


def _what_it_does(step: Step, idents: Sequence[Ident]) -> str:
    """What a change does to ``idents`` in words: "remove the connection from 'A' to
    'B'", or for entries it only reads, "involve the step 'B'"."""
    before, after = _entries(step.before), _entries(step.after)
    written = changed_entries(step.before, step.after) - {_NAME}
    verbs = {
        "remove": [i for i in idents if i in written and i in before and i not in after],
        "add": [i for i in idents if i in written and i not in before],
        "change": [i for i in idents if i in written and i in before and i in after],
    }
    parts = [
        f"{verb} {_names(found, step.after, step.before)}" for verb, found in verbs.items() if found
    ]
    if _NAME in idents and step.before.name != step.after.name:
        parts.append("change the workflow's name")
    return " and ".join(parts) or f"involve {_names(idents, step.after, step.before)}"


def _names(idents: Sequence[Ident], *structures: Structure) -> str:
    """Entries as a user reads them ("the step 'Check coverage'"), found in the first
    of ``structures`` that has them."""
    words = [_name(i, structures) for i in idents]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _name(ident: Ident, structures: Sequence[Structure]) -> str:
    if ident == _NAME:
        return "the workflow's name"
    for structure in structures:
        entry = _entries(structure).get(ident)
        if isinstance(entry, Job):
            return f"the step '{entry.name}'"
        if isinstance(entry, Trigger):
            return TriggerRef(entry.key, entry.type).label
        if isinstance(entry, Edge):
            ends = f"{_label(structure, entry.source)} to {_label(structure, entry.target_job)}"
            return f"the connection from {ends}"
    return f"the entry {ident[1]!r}"


def _label(structure: Structure, key: str) -> str:
    if key in structure.jobs:
        return f"'{structure.jobs[key].name}'"
    if key in structure.triggers:
        return TriggerRef(key, structure.triggers[key].type).label
    return f"'{key}'"
