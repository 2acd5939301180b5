"""What a change would do to what runs, computed from the document graph (DESIGN §5c).

``impact(before, after)`` compares two structures: the steps and triggers the change
removes, the steps it leaves unreachable from every trigger (that a trigger reached
before), the connections it removes or disables, and the triggers whose type it
changes, each by the name a user sees. Nothing here asks a model; the confirmation
before a change (``agents/nodes/confirm.py``), a proposal's change list and the
"what happens if I remove X" tool all say these same sentences.

Entries are matched across the change by id (a renamed key keeps its id), then by
key, or through ``renamed`` for steps without ids. A connection counts as removed
only when its target no longer follows its source on the same condition: inserting a
step between two others keeps the first's edge (retargeted, same condition) and
leads on to the second, so nothing is lost; a step reached by a second path after
its edge is removed is not named either, unless that path starts on another
condition (a failure branch rerouted through a success path is lost). Edges into or
out of a removed step or trigger are not listed: the removal says it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tools.document.reach import reachable_jobs
from tools.document.structure import Edge, Job, Structure, Trigger


@dataclass(frozen=True)
class StepRef:
    """A step as the user knows it."""

    key: str
    """Its job key (after the change, for steps that stay)."""
    name: str
    """Its display name."""


@dataclass(frozen=True)
class TriggerRef:
    """A trigger as the user knows it."""

    key: str
    """Its trigger key (before the change)."""
    type: str
    """``webhook`` or ``cron`` (before the change)."""

    @property
    def label(self) -> str:
        """'the webhook trigger', or 'the cron trigger 'nightly'' when its key is not its
        type."""
        return f"the {self.type} trigger" + ("" if self.key == self.type else f" '{self.key}'")


@dataclass(frozen=True)
class EdgeRef:
    """A connection between two nodes, named by its ends ("from 'A' to 'B'")."""

    source: str
    """The source's key (a step or a trigger), after the change."""
    target: str
    """The target step's key, after the change."""
    label: str
    """"from 'Source' to 'Target'" in display names (a trigger as 'the webhook trigger')."""
    goes_to: str | None = None
    """For a connection that stays but points elsewhere (same id, another target): the
    new target's display name; ``None`` for a connection removed."""


@dataclass(frozen=True)
class TriggerTypeChange:
    """A trigger that stays but changes its type."""

    trigger: TriggerRef
    """The trigger as it was."""
    new_type: str
    """The type it would have."""


@dataclass(frozen=True)
class Impact:
    """What a change would do to what runs; empty (falsy) when it changes none of that."""

    removed_steps: tuple[StepRef, ...] = ()
    """Steps the change deletes, in document order (before)."""
    removed_triggers: tuple[TriggerRef, ...] = ()
    """Triggers the change deletes."""
    unreachable_steps: tuple[StepRef, ...] = ()
    """Steps that stay but that no trigger would reach through enabled edges any more,
    although one did before (never steps that were unreachable already)."""
    removed_edges: tuple[EdgeRef, ...] = ()
    """Enabled connections between steps (or a trigger and a step) that both stay, whose
    target would no longer follow their source on the same condition (``goes_to`` set
    when the connection itself stays, pointed at another step)."""
    disabled_edges: tuple[EdgeRef, ...] = ()
    """Enabled connections that would still exist but only disabled."""
    trigger_type_changes: tuple[TriggerTypeChange, ...] = ()
    """Triggers that stay but change their type (webhook ⇄ cron)."""

    def __bool__(self) -> bool:
        return bool(
            self.removed_steps
            or self.removed_triggers
            or self.unreachable_steps
            or self.removed_edges
            or self.disabled_edges
            or self.trigger_type_changes
        )

    @property
    def sentences(self) -> list[str]:
        """The impact in plain sentences, each naming what it is about; [] when empty."""
        out: list[str] = []
        for trigger in self.removed_triggers:
            out.append(f"{_capital(trigger.label)} would be removed.")
        for change in self.trigger_type_changes:
            out.append(
                f"{_capital(change.trigger.label)} would become a {change.new_type} trigger."
            )
        if self.removed_steps:
            out.append(_steps_sentence(self.removed_steps, "would be removed", prefix=True))
        if self.unreachable_steps:
            reason = "no trigger would reach " + (
                "it" if len(self.unreachable_steps) == 1 else "them"
            )
            out.append(
                _steps_sentence(self.unreachable_steps, "would no longer run", reason=reason)
            )
        gone = [e for e in self.removed_edges if e.goes_to is None]
        if gone:
            out.append(_edges_sentence(gone, "removed"))
        for edge in self.removed_edges:
            if edge.goes_to is not None:
                out.append(f"The connection {edge.label} would go to {edge.goes_to} instead.")
        if self.disabled_edges:
            out.append(_edges_sentence(self.disabled_edges, "disabled"))
        return out

    @property
    def text(self) -> str:
        """The sentences as one paragraph ('' when empty)."""
        return " ".join(self.sentences)

    @property
    def effects(self) -> dict[str, int]:
        """What kinds of thing it does, with how many of each (keys of ``EFFECTS``, in
        that order; only those it does): the words for a question about several changes."""
        retargeted = sum(1 for e in self.removed_edges if e.goes_to is not None)
        counts = {
            "remove_trigger": len(self.removed_triggers),
            "retype_trigger": len(self.trigger_type_changes),
            "remove_step": len(self.removed_steps),
            "stop_step": len(self.unreachable_steps),
            "remove_connection": len(self.removed_edges) - retargeted,
            "redirect_connection": retargeted,
            "disable_connection": len(self.disabled_edges),
        }
        return {kind: n for kind, n in counts.items() if n}


EFFECTS: dict[str, tuple[str, str]] = {
    "remove_trigger": ("remove a trigger", "remove triggers"),
    "retype_trigger": ("change a trigger's type", "change triggers' types"),
    "remove_step": ("remove a step", "remove steps"),
    "stop_step": ("stop a step from running", "stop steps from running"),
    "remove_connection": ("remove a connection", "remove connections"),
    "redirect_connection": ("point a connection at another step", "point connections elsewhere"),
    "disable_connection": ("disable a connection", "disable connections"),
}
"""Each kind of :attr:`Impact.effects` as a verb phrase: (one, several)."""


def effects_text(counts: Mapping[str, int]) -> str:
    """Effects (kind -> how many, as :attr:`Impact.effects` says them, summed over
    changes) as one phrase: "remove a step and point a connection at another step"."""
    return _names(EFFECTS[k][0 if n == 1 else 1] for k, n in counts.items() if n and k in EFFECTS)


def impact(
    before: Structure, after: Structure, *, renamed: Mapping[str, str] | None = None
) -> Impact:
    """What changing ``before`` into ``after`` does to what runs.

    ``renamed`` maps old job keys to new ones for steps without ids (a step with an id
    is followed by its id)."""
    jobs = _match(before.jobs, after.jobs, renamed or {})
    triggers = _match(before.triggers, after.triggers, {})
    nodes = {**jobs, **triggers}

    removed_steps = tuple(_step(job) for key, job in before.jobs.items() if key not in jobs)
    removed_triggers = tuple(
        _trigger(t) for key, t in before.triggers.items() if key not in triggers
    )
    type_changes = tuple(
        TriggerTypeChange(_trigger(t), after.triggers[triggers[key]].type)
        for key, t in before.triggers.items()
        if key in triggers and after.triggers[triggers[key]].type != t.type
    )

    reached_before = reachable_jobs(before)
    reached_after = reachable_jobs(after)
    unreachable = tuple(
        _step(after.jobs[jobs[key]])
        for key in before.jobs
        if key in reached_before and key in jobs and jobs[key] not in reached_after
    )

    removed_edges: dict[tuple[str, str], EdgeRef] = {}
    disabled_edges: dict[tuple[str, str], EdgeRef] = {}
    after_pairs: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for edge in after.edges.values():
        after_pairs[(edge.source, edge.target_job)].append(edge)
    follows = _Follows(after)
    after_by_id = {e.id: e for e in after.edges.values() if e.id is not None}
    for edge in before.edges.values():
        if not edge.enabled or edge.source not in nodes or edge.target_job not in jobs:
            continue  # a disabled edge ran nothing; a removed end's removal says it
        pair = (nodes[edge.source], jobs[edge.target_job])
        if pair in removed_edges or pair in disabled_edges:
            continue
        now = after_pairs.get(pair, [])
        if any(e.enabled for e in now):
            continue
        label = f"from {_node_label(after, pair[0])} to {_node_label(after, pair[1])}"
        if now:
            disabled_edges[pair] = EdgeRef(pair[0], pair[1], label)
        elif not follows(pair[0], pair[1], _condition(edge)):
            moved = after_by_id.get(edge.id) if edge.id is not None else None
            goes_to = None
            if moved is not None and moved.enabled and moved.target_job != pair[1]:
                goes_to = _node_label(after, moved.target_job)
            removed_edges[pair] = EdgeRef(pair[0], pair[1], label, goes_to)

    return Impact(
        removed_steps=removed_steps,
        removed_triggers=removed_triggers,
        unreachable_steps=unreachable,
        removed_edges=tuple(removed_edges.values()),
        disabled_edges=tuple(disabled_edges.values()),
        trigger_type_changes=type_changes,
    )


# --- helpers ---------------------------------------------------------------------------


def _match(
    before: Mapping[str, Job] | Mapping[str, Trigger],
    after: Mapping[str, Job] | Mapping[str, Trigger],
    renamed: Mapping[str, str],
) -> dict[str, str]:
    """Before key -> after key, for each entry that is still there."""
    by_id = {entry.id: key for key, entry in after.items() if entry.id is not None}
    out: dict[str, str] = {}
    for key, entry in before.items():
        if entry.id is not None and entry.id in by_id:
            out[key] = by_id[entry.id]
            continue
        new_key = renamed.get(key, key)
        now = after.get(new_key)
        # The same key on an entry with another id is a new entry: the old one is gone.
        if now is not None and (entry.id is None or now.id is None or now.id == entry.id):
            out[key] = new_key
    return out


def _condition(edge: Edge) -> tuple[str, str | None]:
    return (edge.condition_type, edge.condition_expression)


class _Follows:
    """Whether a target still follows a source after the change: some enabled path from
    the source reaches it, starting with an edge of the same condition."""

    def __init__(self, structure: Structure) -> None:
        self._out: dict[str, list[Edge]] = defaultdict(list)
        for edge in structure.edges.values():
            if edge.enabled:
                self._out[edge.source].append(edge)

    def __call__(self, source: str, target: str, condition: tuple[str, str | None]) -> bool:
        starts = [e.target_job for e in self._out.get(source, []) if _condition(e) == condition]
        seen: set[str] = set()
        todo = list(starts)
        while todo:
            node = todo.pop()
            if node == target:
                return True
            if node in seen:
                continue
            seen.add(node)
            todo.extend(e.target_job for e in self._out.get(node, []))
        return False


def _step(job: Job) -> StepRef:
    return StepRef(job.key, job.name)


def _trigger(trigger: Trigger) -> TriggerRef:
    return TriggerRef(trigger.key, trigger.type)


def _node_label(structure: Structure, key: str) -> str:
    job = structure.jobs.get(key)
    if job is not None:
        return _quote(job.name)
    trigger = structure.triggers.get(key)
    return _trigger(trigger).label if trigger is not None else _quote(key)


def _quote(name: str) -> str:
    # Single quotes as the user reads them; repr() would switch quotes around "O'Brien".
    return f"'{name}'"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _names(items: Iterable[str]) -> str:
    listed = list(items)
    if len(listed) <= 2:
        return " and ".join(listed)
    return ", ".join(listed[:-1]) + " and " + listed[-1]


def _steps_sentence(
    steps: Sequence[StepRef], predicate: str, *, prefix: bool = False, reason: str = ""
) -> str:
    """ "The step 'A' would be removed." or "'A' and 2 more steps would ...: 'B', 'C'."."""
    first, rest = steps[0], steps[1:]
    why = f" ({reason})" if reason else ""
    if not rest:
        lead = "The step " if prefix else ""
        return f"{lead}{_quote(first.name)} {predicate}{why}."
    more = f"{len(rest)} more step{'s' if len(rest) != 1 else ''}"
    listed = ", ".join(_quote(s.name) for s in rest)
    return f"{_quote(first.name)} and {more} {predicate}: {listed}{why}."


def _edges_sentence(edges: Sequence[EdgeRef], done: str) -> str:
    """ "The connection from 'A' to 'B' would be removed." (a trigger reads "from the
    webhook trigger to 'B'")."""
    noun = "The connection" if len(edges) == 1 else "The connections"
    return f"{noun} {_names(e.label for e in edges)} would be {done}."
