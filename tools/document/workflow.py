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

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString

from tools.document.emitter import FragmentEmitter
from tools.document.schema import check_shape
from tools.document.structure import (
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
from tools.document.yaml_comments import (
    FIELD_INDENT,
    has_comments,
    header_comments,
    is_block,
    open_ended,
    put_before,
    put_lines,
    read_post,
    reopen_header,
    settle_open_ended,
    tail_slot,
    take_lines,
    write_post,
)
from tools.document.yaml_io import DEFAULT_MAX_BYTES, check_storable, dig, dump_yaml, load_yaml
from tools.errors import DocumentError

_TOP_ORDER = ("name", *SECTIONS)


class WorkflowDocument:
    _source: str | None = None  # the text it was parsed from, until first emitted

    def __init__(self, root: CommentedMap, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._root = root
        self._max_bytes = max_bytes
        self._structure = _read_structure(root)
        settle_open_ended(root, None)
        self._emitter = FragmentEmitter()
        self._text: str | None = None

    @classmethod
    def from_yaml(cls, text: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> WorkflowDocument:
        data = load_yaml(text, max_bytes=max_bytes)
        if data is None:
            data = CommentedMap()
        check_shape(data)
        doc = cls(data, max_bytes=max_bytes)
        doc._source = text
        return doc

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

    def unmodelled(self, *path: str) -> Any:
        """A field no tool models, as kept (``"openfn"``); None if absent. Read-only."""
        return dig(self._root, path)

    def to_yaml(self) -> str:
        if self._text is None:
            self._text = self._emitter.emit(self._root)
        return self._text

    def dump_full(self) -> str:
        """A from-scratch ruamel dump, bypassing the fragment cache (tests, benchmarks)."""
        return dump_yaml(self._root)

    def copy(self) -> WorkflowDocument:
        """An independent document with the same text, as warm as this one: parsed from
        the emitted text, which emits the same fragments again (documents round-trip),
        so they are carried over instead of redone (~100 ms at 200 steps)."""
        text = self.to_yaml()
        doc = WorkflowDocument.from_yaml(text, max_bytes=self._max_bytes)
        doc._emitter.take_cache(self._emitter)
        doc._text = text
        return doc

    def apply(self, ops: Sequence[Op], structure: Structure) -> None:
        """Write validated ops to the YAML tree; ``structure`` is their result.

        The new YAML is emitted here (cached, and streamed next anyway) and must fit
        ``max_bytes`` and load again. If not, or if writing fails part-way (a bug), the
        tree is restored from the last emitted text (never emitted: the source, so a
        first edit emits once), never left half written, and the error is raised."""
        for op in ops:  # before anything is written: nothing to restore
            entry = getattr(op, "key", None) or getattr(op, "old", None)
            where = "in the name" if entry is None else f"in {entry!r}"
            check_storable([getattr(op, f, None) for f in ("name", "key", "new", "values")], where)
        before = self._text
        restore_from = before if before is not None else self._source or self.to_yaml()
        try:
            for op in ops:
                self._write(op)
            self._check_reloadable()
            text = self._emitter.emit(self._root)
            self._check_size(text)
        except Exception:
            settle_open_ended(root := load_yaml(restore_from, max_bytes=1 << 40), None)
            self._root = root  # self._structure still describes it
            self._emitter.clear()
            self._text = before
            raise
        self._structure = structure
        self._text, self._source = text, None

    def _check_size(self, text: str) -> None:
        # A character is at most four UTF-8 bytes: short texts need no encoding.
        if len(text) * 4 <= self._max_bytes:
            return
        size = len(text.encode("utf-8"))
        if size > self._max_bytes:
            raise DocumentError(
                f"The change would make the document {size} bytes; the limit is "
                f"{self._max_bytes} bytes.",
                code="document_too_large",
            )

    def _check_reloadable(self) -> None:
        """Cheap guard for the one known shape ruamel emits as invalid YAML: an empty block
        mapping whose key carries comments is written as ``key:\\n  # comment\\n{}``, which
        does not parse. ``_write`` turns an emptied section to flow style: only a bug."""
        for section in SECTIONS:
            value = self._root.get(section)
            if (
                isinstance(value, CommentedMap)
                and not value
                and not value.fa.flow_style()
                and has_comments(self._root, section)
            ):
                raise DocumentError(
                    f"The change would leave the empty {section} section in a form that "
                    "cannot be loaded again.",
                    code="unloadable_result",
                )

    # --- writing one op to the tree ---

    def _write(self, op: Op) -> None:
        if isinstance(op, SetName):
            _set_in_order(self._root, "name", op.name, _TOP_ORDER)
            self._emitter.invalidate_top("name")
        elif isinstance(op, AddEntry):
            self._add_entry(op)
        elif isinstance(op, UpdateEntry):
            self._update_entry(op)
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
            self._remove_entry(op)

    # ruamel keeps the comment lines between two entries as the trailing comment of
    # the last value before them. An edit that moves that value (appending after it,
    # removing its entry, changing the entry's last field) moves those lines too, so
    # comments meant for the next entry, the next section or the end of the
    # document stay where they were written.

    def _add_entry(self, op: AddEntry) -> None:
        entry = CommentedMap()
        for field in entry_fields(op.section):
            value = op.values.get(field)
            if value is not None:
                entry[field] = _yaml_value(field, value)
        current = self._root.get(op.section)
        lines = ""
        if isinstance(current, CommentedMap) and current:
            section = current
            if not section.fa.flow_style():
                last = next(reversed(section))
                lines = take_lines(*tail_slot(section, last))
                if lines:
                    self._emitter.invalidate_entry(op.section, last)
        else:
            section, lines = self._open_section(op.section)
        section[op.key] = entry
        self._emitter.invalidate_entry(op.section, op.key)
        if lines:
            self._put_after(op.section, op.key, lines)

    def _open_section(self, name: Section) -> tuple[CommentedMap, str]:
        """An empty section ready for entries, and the comment lines to put after them."""
        root = self._root
        self._emitter.invalidate_section_head(name)
        flow_root = root.fa.flow_style()
        if name in root:
            current = root[name]
            section = current if isinstance(current, CommentedMap) else CommentedMap()
            if not flow_root:
                section.fa.set_block_style()
            if section is not current:
                root[name] = section  # root keeps the comments it holds for the key
            return section, reopen_header(root, name)
        section = CommentedMap()
        keys = list(root)
        _set_in_order(root, name, section, _TOP_ORDER)
        position = list(root).index(name)
        if position == 0 or flow_root:
            return section, ""
        # Lines after the previous key are meant for what follows it (the next
        # section, or the end of the document): they go after the new entry.
        previous = keys[position - 1]
        lines = take_lines(*tail_slot(root, previous))
        if lines:
            self._invalidate_end_of_top(previous)
        return section, lines

    def _update_entry(self, op: UpdateEntry) -> None:
        section = self._root[op.section]
        entry = section[op.key]
        # Only a change to the entry's last field, or a new field (which may go after
        # it), can move the end of the entry; otherwise its trailing lines stay put.
        moves = isinstance(entry, CommentedMap) and bool(entry) and not entry.fa.flow_style()
        if moves:
            last = next(reversed(entry))
            moves = any(field == last or field not in entry for field in op.values)
        lines = take_lines(*tail_slot(section, op.key)) if moves else ""
        for field, value in op.values.items():
            if value is None:
                if field in entry:
                    del entry[field]
                    entry.ca.items.pop(field, None)
                continue
            new = _yaml_value(field, value)
            # A value turning into (or out of) a block scalar holds its comment in
            # another form: convert it, so it stays a comment of its own.
            converts = field in entry and is_block(entry[field]) != is_block(new)
            comment = read_post(entry, field) if converts else None
            _set_in_order(entry, field, new, entry_fields(op.section))
            if comment is not None and (comment[0] or comment[1]):
                write_post(entry, field, *comment, line_indent=FIELD_INDENT)
        self._emitter.invalidate_entry(op.section, op.key)
        if lines:
            self._put_after(op.section, op.key, lines)

    def _remove_entry(self, op: RemoveEntry) -> None:
        section = self._root[op.section]
        keys = list(section)
        index = keys.index(op.key)
        lines = ""
        if not section.fa.flow_style():
            # The entry's own comments go with it; the lines after it belong to the
            # next entry, the next section or the end of the document.
            lines = take_lines(*tail_slot(section, op.key))
        del section[op.key]
        section.ca.items.pop(op.key, None)
        self._emitter.invalidate_entry(op.section, op.key)
        if not section:
            self._close_section(op.section, lines)
        elif index == 0:
            # The next entry now opens the section; lines above it become its own.
            following = keys[1]
            if lines:
                put_before(section, following, lines)
            self._emitter.invalidate_entry(op.section, following)
        elif lines:
            self._put_after(op.section, keys[index - 1], lines)

    def _put_after(self, name: Section, key: str, lines: str) -> None:
        """Put whole comment lines right after entry ``key`` of section ``name``."""
        section = self._root[name]
        container, slot = tail_slot(section, key)
        if open_ended(container[slot]):
            # ruamel cannot write a comment after a keep-chomped block scalar (``|+``)
            # that loads back; the lines go just above whatever follows instead.
            keys = list(section)
            index = keys.index(key)
            if index + 1 < len(keys):
                put_before(section, keys[index + 1], lines)
                self._emitter.invalidate_entry(name, keys[index + 1])
                return
            tops = list(self._root)
            index = tops.index(name)
            if index + 1 < len(tops):
                put_before(self._root, tops[index + 1], lines)
                self._emitter.invalidate_top(tops[index + 1])
                if tops[index + 1] in SECTIONS:
                    self._emitter.invalidate_section_head(tops[index + 1])
                return
        put_lines(container, slot, lines)
        self._emitter.invalidate_entry(name, key)

    def _close_section(self, name: Section, extra: str) -> None:
        """Keep an emptied section loadable: ``name: {}`` with its comments after it.

        ruamel writes an empty block mapping whose key carries comments as
        ``name:\\n  # comment\\n{}``, which does not parse; in flow style it
        writes ``name: {}  # comment`` and then the comment lines, which does.
        """
        root = self._root
        section = root[name]
        eol, lines, column = header_comments(root, name)
        lines += "".join(token.value for token in section.ca.end or ())
        lines += extra
        section.ca.comment = None
        section.ca.end = []
        section.ca.items.clear()
        section.fa.set_flow_style()
        slots = root.ca.items.get(name)
        if slots is not None:
            slots[2] = slots[3] = None
        write_post(root, name, eol, lines, column)
        self._emitter.invalidate_section_head(name)

    def _invalidate_end_of_top(self, key: str) -> None:
        """Invalidate the fragment that holds the end of top-level ``key``."""
        self._emitter.invalidate_top(key)
        value = self._root.get(key)
        if key in SECTIONS and isinstance(value, CommentedMap) and value:
            self._emitter.invalidate_entry(key, next(reversed(value)))


def _yaml_value(field: str, value: Any) -> Any:
    if field == "body" and isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    return _commented(value)


def _commented(value: Any) -> Any:
    """Plain dicts and lists as ruamel containers, so their comments can be tracked."""
    if isinstance(value, dict) and not isinstance(value, CommentedMap):
        mapping = CommentedMap()
        for key, item in value.items():
            mapping[key] = _commented(item)
        return mapping
    if isinstance(value, list) and not isinstance(value, CommentedSeq):
        return CommentedSeq(_commented(item) for item in value)
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
