"""Assembling a Planwright document from an imported workflow's parts.

Each importer reads its format and hands the parts here by the keys that
format uses; the builder gives them Planwright keys (the same key when it is
a valid one), mints the ids the format does not carry, resolves references by
key, and produces a :class:`WorkflowDocument` that has passed the same shape
and size checks as any YAML document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import LiteralScalarString

from tools.document import WorkflowDocument
from tools.document.emitter import FragmentEmitter
from tools.document.names import derive_key, edge_key, is_valid_key
from tools.document.openfn.fields import CONTEXT_FIELD, bad
from tools.document.structure import CONDITION_TYPES
from tools.document.yaml_io import DEFAULT_MAX_BYTES

TRIGGER_TYPES = ("webhook", "cron")


class DocumentBuilder:
    """One workflow being imported; ``field`` arguments are paths for error messages."""

    def __init__(self, name: str | None, new_id: Callable[[], str]) -> None:
        self._new_id = new_id
        self._root = CommentedMap()
        if name is not None:
            self._root["name"] = name
        self._sections = {s: CommentedMap() for s in ("jobs", "triggers", "edges")}
        self._keys: dict[str, str] = {}  # the format's job/trigger key -> Planwright key
        self._taken: set[str] = set()  # the Planwright keys in use (``_keys``' values)
        self._triggers: set[str] = set()
        self._cursors: list[tuple[str, str, str]] = []  # trigger key, job ref, field
        self._ids: dict[str, str] = {}  # id -> field of the entry that holds it
        self._context: dict[str, Any] = {}

    def set_context(self, context: Mapping[str, Any]) -> None:
        """What the format holds around the workflow (:mod:`.context`), kept in the
        document's ``openfn`` field for the exports to write back."""
        self._context = dict(context)

    def add_job(
        self,
        source_key: str,
        field: str,
        *,
        name: str,
        adaptor: str,
        body: str | None,
        credential: str | None,
        given_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> str:
        key = self._claim(source_key, name, field)
        entry = CommentedMap()
        entry["id"] = self._id(given_id, field)
        entry["name"] = name
        entry["adaptor"] = adaptor
        if credential:
            entry["credential"] = credential
        if body is not None:
            entry["body"] = LiteralScalarString(body) if "\n" in body else body
        entry.update(extra or {})
        self._sections["jobs"][key] = entry
        return key

    def add_trigger(
        self,
        source_key: str,
        field: str,
        *,
        type: str,
        enabled: bool,
        settings: Mapping[str, Any],
        cursor_job: str | None = None,
        given_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> str:
        """``settings``: cron_expression and the webhook fields, as given; ``cursor_job``:
        the cron cursor by the format's job key (or a job id), resolved in :meth:`build`."""
        if type not in TRIGGER_TYPES:
            bad(
                f"{field}.type",
                f"{type!r} is not a trigger type Planwright edits ({', '.join(TRIGGER_TYPES)}).",
            )
        key = self._claim(source_key, type, field)
        entry = CommentedMap()
        entry["id"] = self._id(given_id, field)
        entry["type"] = type
        entry["enabled"] = enabled
        entry.update({k: v for k, v in settings.items() if v is not None})
        entry.update(extra or {})
        self._sections["triggers"][key] = entry
        self._triggers.add(key)
        if cursor_job is not None:
            self._cursors.append((key, cursor_job, f"{field}.cron_cursor_job"))
        return key

    def node(self, source_key: str, field: str) -> str:
        """The Planwright key of a job or trigger named by the format's key."""
        key = self._keys.get(source_key)
        if key is None:
            bad(field, f"there is no step or trigger {source_key!r}.")
        return key

    def is_trigger(self, key: str) -> bool:
        return key in self._triggers

    def add_edge(
        self,
        field: str,
        *,
        source: str,
        target: str,
        condition_type: str,
        expression: str | None,
        label: str | None,
        enabled: bool,
        given_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """``source``/``target`` are Planwright keys (see :meth:`node`)."""
        if target in self._triggers:
            bad(f"{field}.target_job", f"{target!r} is a trigger; an edge ends at a step.")
        if condition_type not in CONDITION_TYPES:
            bad(
                f"{field}.condition_type",
                f"{condition_type!r} is not one of {', '.join(CONDITION_TYPES)}.",
            )
        if condition_type == "js_expression" and not (expression or "").strip():
            bad(f"{field}.condition_expression", "a js_expression edge needs an expression.")
        key = edge_key(source, target)
        if key in self._sections["edges"]:
            bad(field, f"a second edge from {source!r} to {target!r}.")
        entry = CommentedMap()
        entry["id"] = self._id(given_id, field)
        entry["source_trigger" if source in self._triggers else "source_job"] = source
        entry["target_job"] = target
        entry["condition_type"] = condition_type
        if condition_type == "js_expression" and expression is not None:
            entry["condition_expression"] = (
                LiteralScalarString(expression) if "\n" in expression else expression
            )
        if label:
            entry["condition_label"] = label
        entry["enabled"] = enabled
        entry.update(extra or {})
        self._sections["edges"][key] = entry

    def build(self, *, max_bytes: int = DEFAULT_MAX_BYTES) -> WorkflowDocument:
        jobs = self._sections["jobs"]
        for trigger, ref, field in self._cursors:
            key = self._keys.get(ref)
            if key is not None and key in jobs:
                job_id = jobs[key]["id"]
            else:
                job_id = next((j["id"] for j in jobs.values() if j["id"] == ref), None)
            if job_id is None:
                bad(field, f"there is no step {ref!r} for the cron cursor.")
            self._sections["triggers"][trigger]["cron_cursor_job_id"] = job_id
        for name, section in self._sections.items():
            if section:
                self._root[name] = section
        if self._context:
            self._root[CONTEXT_FIELD] = self._context
        # Written and read back, so the document holds exactly what a parse of its
        # YAML gives; through the fragment emitter, which writes plain entries
        # directly (a full ruamel dump of 3,000 steps is seconds) and seeds nothing.
        text = FragmentEmitter().emit(self._root)
        return WorkflowDocument.from_yaml(text, max_bytes=max_bytes)

    def _id(self, given: str | None, field: str) -> str:
        """``given`` (an id the file carries) if no other entry holds it, else a new one."""
        if given is None:
            value = self._new_id()
        elif given in self._ids:
            bad(f"{field}.id", f"{given!r} is also the id of {self._ids[given]}; ids are unique.")
        else:
            value = given
        self._ids[value] = field
        return value

    def _claim(self, source_key: str, name: str, field: str) -> str:
        if source_key in self._keys:
            bad(field, f"a second step or trigger keyed {source_key!r}.")
        taken = self._taken
        base = (
            source_key
            if is_valid_key(source_key)
            else derive_key(name) or derive_key(source_key) or "step"
        )
        key, n = base, 2
        while key in taken:
            key, n = f"{base}-{n}", n + 1
        self._keys[source_key] = key
        taken.add(key)
        return key
