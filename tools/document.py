"""The workflow document: ruamel round-trip YAML plus a typed structure index.

``WorkflowDocument`` owns the YAML tree. Everything else reads its
:class:`~tools.structure.Structure` and changes it only through
:meth:`WorkflowDocument.apply`, which the tool registry calls after a draft
has validated. Fields a tool does not own are never touched, so comments,
key order, quoting and unknown fields survive every edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import LiteralScalarString

from tools.emitter import FragmentEmitter
from tools.errors import DocumentError
from tools.model import check_shape
from tools.structure import (
    SECTIONS,
    AddEntry,
    Op,
    RekeyEntry,
    RemoveEntry,
    Section,
    SetName,
    Structure,
    UpdateEntry,
    entry_fields,
    make_entry,
)
from tools.yaml_io import DEFAULT_MAX_BYTES, dump_yaml, load_yaml

_TOP_ORDER = ("name", *SECTIONS)


class WorkflowDocument:
    def __init__(self, root: CommentedMap, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._root = root
        self._max_bytes = max_bytes
        self._structure = _read_structure(root)
        self._emitter = FragmentEmitter()
        self._text: str | None = None

    @classmethod
    def from_yaml(cls, text: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> WorkflowDocument:
        data = load_yaml(text, max_bytes=max_bytes)
        if data is None:
            data = CommentedMap()
        check_shape(data)
        return cls(data, max_bytes=max_bytes)

    @classmethod
    def new(cls, name: str | None = None) -> WorkflowDocument:
        root = CommentedMap()
        if name is not None:
            root["name"] = name
        return cls(root)

    @property
    def structure(self) -> Structure:
        """The current structure. Treat as read-only; change it through tools."""
        return self._structure

    @property
    def name(self) -> str | None:
        return self._structure.name

    def to_yaml(self) -> str:
        if self._text is None:
            self._text = self._emitter.emit(self._root)
        return self._text

    def dump_full(self) -> str:
        """A from-scratch ruamel dump, bypassing the fragment cache (tests, benchmarks)."""
        return dump_yaml(self._root)

    def copy(self) -> WorkflowDocument:
        return WorkflowDocument.from_yaml(self.to_yaml(), max_bytes=self._max_bytes)

    def apply(self, ops: Sequence[Op], structure: Structure) -> None:
        """Write validated ops to the YAML tree; ``structure`` is their result.

        If writing fails part-way (a bug, never a user error), the tree is
        restored from the last emitted text so the document is never half
        written.
        """
        before = self.to_yaml()
        try:
            for op in ops:
                self._write(op)
        except Exception:
            restored = load_yaml(before, max_bytes=max(self._max_bytes, len(before) * 4))
            self._root = restored
            self._structure = _read_structure(restored)
            self._emitter.clear()
            self._text = before
            raise
        self._structure = structure
        self._text = None

    # --- writing one op to the tree ---

    def _write(self, op: Op) -> None:
        if isinstance(op, SetName):
            _set_in_order(self._root, "name", op.name, _TOP_ORDER)
            self._emitter.invalidate_top("name")
        elif isinstance(op, AddEntry):
            section = self._section_map(op.section)
            entry = CommentedMap()
            for field in entry_fields(op.section):
                value = op.values.get(field)
                if value is not None:
                    entry[field] = _yaml_value(field, value)
            section[op.key] = entry
            self._emitter.invalidate_entry(op.section, op.key)
        elif isinstance(op, UpdateEntry):
            entry = self._root[op.section][op.key]
            for field, value in op.values.items():
                if value is None:
                    if field in entry:
                        del entry[field]
                        entry.ca.items.pop(field, None)
                else:
                    _set_in_order(entry, field, _yaml_value(field, value), entry_fields(op.section))
            self._emitter.invalidate_entry(op.section, op.key)
        elif isinstance(op, RekeyEntry):
            section = self._root[op.section]
            position = list(section).index(op.old)
            comment = section.ca.items.pop(op.old, None)
            value = section[op.old]
            del section[op.old]
            section.insert(position, op.new, value)
            if comment is not None:
                section.ca.items[op.new] = comment
            self._emitter.invalidate_entry(op.section, op.old)
            self._emitter.invalidate_entry(op.section, op.new)
        elif isinstance(op, RemoveEntry):
            section = self._root[op.section]
            del section[op.key]
            section.ca.items.pop(op.key, None)
            self._emitter.invalidate_entry(op.section, op.key)

    def _section_map(self, section: Section) -> CommentedMap:
        current = self._root.get(section)
        if isinstance(current, CommentedMap):
            return current
        fresh = CommentedMap()
        _set_in_order(self._root, section, fresh, _TOP_ORDER)
        self._emitter.invalidate_top(section)
        return fresh


def _yaml_value(field: str, value: Any) -> Any:
    if field == "body" and isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    return value


def _set_in_order(mapping: CommentedMap, key: str, value: Any, canonical: Sequence[str]) -> None:
    """Set ``key``; a new key goes after the nearest canonical key before it."""
    if key in mapping:
        mapping[key] = value
        return
    keys = list(mapping)
    position = 0
    for earlier in canonical[: canonical.index(key)] if key in canonical else canonical:
        if earlier in mapping:
            position = max(position, keys.index(earlier) + 1)
    if key not in canonical:
        position = len(keys)
    mapping.insert(position, key, value)


def _read_structure(root: CommentedMap) -> Structure:
    structure = Structure(name=root.get("name"))
    for section in SECTIONS:
        entries = root.get(section)
        if entries is None:
            continue
        if not isinstance(entries, dict):
            raise DocumentError(f"{section} must be a mapping.", code="invalid_field")
        target = structure.section(section)
        for key, values in entries.items():
            target[key] = make_entry(section, key, dict(values))
    return structure
