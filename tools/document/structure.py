"""A typed, cheap-to-copy view of a workflow's structure, and the edit ops.

Tools never touch YAML. A handler edits a :class:`Draft` (a copy of the
structure that records every primitive op it performs); the registry then
validates the draft's structure and, only if everything holds, replays the
recorded ops onto the round-trip YAML tree. That ordering is what makes
"validate everything first, then write" a property of the code, not of each
tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Literal

Section = Literal["jobs", "triggers", "edges"]
SECTIONS: tuple[Section, ...] = ("jobs", "triggers", "edges")
ConditionType = Literal["always", "on_job_success", "on_job_failure", "js_expression"]
CONDITION_TYPES: tuple[str, ...] = ("always", "on_job_success", "on_job_failure", "js_expression")
TriggerType = Literal["webhook", "cron"]
WEBHOOK_FIELDS = ("webhook_reply", "webhook_response_config", "custom_path")
CRON_FIELDS = ("cron_expression", "cron_cursor_job_id")


@dataclass(frozen=True, slots=True)
class Job:
    key: str
    id: str | None
    name: str
    adaptor: str
    body: str | None = None
    credential: str | None = None
    """The name of an OpenFn credential the step runs with; a name only, never a secret."""

    order: ClassVar[tuple[str, ...]] = ("id", "name", "adaptor", "credential", "body")


@dataclass(frozen=True, slots=True)
class Trigger:
    key: str
    id: str | None
    type: str
    enabled: bool = False
    cron_expression: str | None = None
    cron_cursor_job_id: str | None = None
    webhook_reply: Any = None
    webhook_response_config: Any = None
    custom_path: str | None = None

    order: ClassVar[tuple[str, ...]] = (
        "id",
        "type",
        "enabled",
        "cron_expression",
        "cron_cursor_job_id",
        "webhook_reply",
        "webhook_response_config",
        "custom_path",
    )


@dataclass(frozen=True, slots=True)
class Edge:
    key: str
    id: str | None
    target_job: str
    source_job: str | None = None
    source_trigger: str | None = None
    condition_type: str = "always"
    condition_expression: str | None = None
    condition_label: str | None = None
    enabled: bool = True

    order: ClassVar[tuple[str, ...]] = (
        "id",
        "source_trigger",
        "source_job",
        "target_job",
        "condition_type",
        "condition_expression",
        "condition_label",
        "enabled",
    )

    @property
    def source(self) -> str:
        return self.source_job if self.source_job is not None else (self.source_trigger or "")


_CONDITION_WORDS = {
    "always": "always",
    "on_job_success": "on success",
    "on_job_failure": "on failure",
}


def condition_text(
    condition_type: str, expression: str | None = None, label: str | None = None
) -> str:
    """An edge condition in words: ``always``, ``on success``, ``on failure``, or
    ``when <label or expression>`` for a JavaScript condition."""
    if condition_type == "js_expression":
        return f"when {label or expression or '?'}"
    return _CONDITION_WORDS.get(condition_type, condition_type)


Entry = Job | Trigger | Edge
_ENTRY_TYPES: dict[Section, type[Job] | type[Trigger] | type[Edge]] = {
    "jobs": Job,
    "triggers": Trigger,
    "edges": Edge,
}


def entry_fields(section: Section) -> tuple[str, ...]:
    """The document fields of a section's entries, in canonical order."""
    return _ENTRY_TYPES[section].order


def make_entry(section: Section, key: str, values: dict[str, Any]) -> Entry:
    names = {f.name for f in fields(_ENTRY_TYPES[section])}
    known = {k: v for k, v in values.items() if k in names}
    known.setdefault("id", None)  # hand-written documents may leave ids out
    return _ENTRY_TYPES[section](key=key, **known)


# --- primitive ops ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SetName:
    name: str


@dataclass(frozen=True, slots=True)
class AddEntry:
    section: Section
    key: str
    values: dict[str, Any]


@dataclass(frozen=True, slots=True)
class UpdateEntry:
    section: Section
    key: str
    values: dict[str, Any]
    unset: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RekeyEntry:
    section: Section
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class RemoveEntry:
    section: Section
    key: str


Op = SetName | AddEntry | UpdateEntry | RekeyEntry | RemoveEntry


@dataclass(frozen=True)
class Change:
    """One user-visible change, for the model's result text and the ``workflow`` frame."""

    action: Literal["added", "updated", "renamed", "removed"]
    kind: Literal["workflow", "job", "trigger", "edge"]
    key: str
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"action": self.action, "kind": self.kind, "key": self.key, "detail": self.detail}


@dataclass
class Structure:
    """Name plus the three sections, each an insertion-ordered dict of frozen entries."""

    name: str | None = None
    jobs: dict[str, Job] = field(default_factory=dict)
    triggers: dict[str, Trigger] = field(default_factory=dict)
    edges: dict[str, Edge] = field(default_factory=dict)

    def copy(self) -> Structure:
        return Structure(self.name, dict(self.jobs), dict(self.triggers), dict(self.edges))

    def section(self, section: Section) -> dict[str, Any]:
        entries: dict[str, Any] = getattr(self, section)
        return entries

    def apply(self, op: Op) -> None:
        if isinstance(op, SetName):
            self.name = op.name
        elif isinstance(op, AddEntry):
            self.section(op.section)[op.key] = make_entry(op.section, op.key, op.values)
        elif isinstance(op, UpdateEntry):
            entries = self.section(op.section)
            changes = dict(op.values)
            changes.update(dict.fromkeys(op.unset))
            entries[op.key] = replace(entries[op.key], **changes)
        elif isinstance(op, RekeyEntry):
            entries = self.section(op.section)
            rebuilt = {
                (op.new if k == op.old else k): (replace(v, key=op.new) if k == op.old else v)
                for k, v in entries.items()
            }
            entries.clear()
            entries.update(rebuilt)
        elif isinstance(op, RemoveEntry):
            del self.section(op.section)[op.key]

    # --- lookups used by tools and validation ---

    def edges_from(self, source: str) -> list[Edge]:
        return [e for e in self.edges.values() if e.source == source]

    def edges_into(self, job_key: str) -> list[Edge]:
        return [e for e in self.edges.values() if e.target_job == job_key]

    def find_edge(self, source: str, target: str) -> Edge | None:
        for edge in self.edges.values():
            if edge.source == source and edge.target_job == target:
                return edge
        return None

    def root_jobs(self) -> list[str]:
        """Jobs no other job points at (trigger edges do not count)."""
        targeted = {e.target_job for e in self.edges.values() if e.source_job is not None}
        return [k for k in self.jobs if k not in targeted]


class Draft:
    """A working copy of a structure that records the ops applied to it."""

    def __init__(self, base: Structure) -> None:
        self.structure = base.copy()
        self.ops: list[Op] = []
        self.changes: list[Change] = []

    def apply(self, op: Op) -> None:
        self.structure.apply(op)
        self.ops.append(op)

    def note(self, change: Change) -> None:
        self.changes.append(change)
