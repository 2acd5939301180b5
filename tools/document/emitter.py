"""Incremental YAML emission.

A full ruamel dump of a 200-job document takes ~100 ms; a mutation touches one
or a few entries. The emitter dumps each top-level key, and each entry of the
``jobs``/``triggers``/``edges`` sections, as its own fragment inside a wrapper
that reproduces its nesting, then caches the text. A mutation invalidates only
the fragments it touched; the document is the concatenation. Output is
byte-identical to a full dump (property-tested); shapes this scheme cannot
reproduce exactly fall back to a full dump.

Which fragment carries which comment:

- the document's leading comment (``root.ca.comment``) goes with the first
  fragment of the first top-level key only;
- a section's header comments (on its key line and the comment lines after
  it, ``root.ca.items[section]`` / ``entries.ca.comment``) go with the first
  entry of that section only;
- every later entry is dumped under a bare ``section:`` line carrying no
  comment, and exactly that line is dropped;
- comments an entry holds itself (its key line, comment lines inside it or
  after its last value, comment lines just above its key) go with the entry.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap

from tools.document.fast_emit import entry_text
from tools.document.structure import SECTIONS
from tools.document.yaml_io import dump_yaml, make_yaml

FragmentKey = tuple[Any, ...]
_DOCUMENT_END = "\n...\n"


class _Unsplittable(Exception):
    """A fragment cannot be reproduced exactly; the caller dumps the whole document."""


class FragmentEmitter:
    def __init__(self) -> None:
        self._yaml = make_yaml()
        self._cache: dict[FragmentKey, str] = {}

    def invalidate_top(self, key: str) -> None:
        for first in (True, False):
            self._cache.pop(("top", key, first), None)

    def invalidate_entry(self, section: str, key: str) -> None:
        for first_entry in (True, False):
            for first_top in (True, False):
                self._cache.pop(("entry", section, key, first_entry, first_top), None)
        self.invalidate_top(section)  # the atomic form of the section, if it is used

    def invalidate_section_head(self, section: str) -> None:
        """Drop what depends on a section's header comments: its first entry and atomic form."""
        stale = [k for k in self._cache if k[0] == "entry" and k[1] == section and k[3]]
        for key in stale:
            del self._cache[key]
        self.invalidate_top(section)

    def clear(self) -> None:
        self._cache.clear()

    def take_cache(self, other: FragmentEmitter) -> None:
        """Start from ``other``'s fragments: for a tree parsed from ``other``'s output."""
        self._cache = dict(other._cache)

    def emit(self, root: Any) -> str:
        if not isinstance(root, CommentedMap) or not root or _needs_full_dump(root):
            return dump_yaml(root, self._yaml)
        parts: list[str] = []
        try:
            for index, key in enumerate(root):
                value = root[key]
                first_top = index == 0
                if key in SECTIONS and _splittable(value):
                    parts.extend(self._section(root, key, value, first_top))
                else:
                    parts.append(self._top(root, key, first_top))
        except _Unsplittable:
            return dump_yaml(root, self._yaml)
        # A fragment ending in a keep-chomped block scalar (``|+``) ends with the
        # document-end marker; a full dump writes it only at the very end. (After a
        # comment that follows such a scalar, ruamel writes it mid-document too.)
        for index in range(len(parts) - 1):
            part = parts[index]
            if part.endswith(_DOCUMENT_END):
                part = part[: -len(_DOCUMENT_END) + 1]
                if part.rsplit("\n", 2)[-2].lstrip().startswith("#"):
                    return dump_yaml(root, self._yaml)
                parts[index] = part
        return "".join(parts)

    def _top(self, root: CommentedMap, key: str, first_top: bool) -> str:
        cache_key = ("top", key, first_top)
        text = self._cache.get(cache_key)
        if text is None:
            text = dump_yaml(_wrap(root, key, root[key], first_top), self._yaml)
            _check_fragment(text, key)
            self._cache[cache_key] = text
        return text

    def _section(
        self, root: CommentedMap, section: str, entries: CommentedMap, first_top: bool
    ) -> list[str]:
        out: list[str] = []
        for index, entry_key in enumerate(entries):
            first_entry = index == 0
            cache_key = ("entry", section, entry_key, first_entry, first_top)
            text = self._cache.get(cache_key)
            if text is None:
                text = self._entry(root, section, entries, entry_key, first_entry, first_top)
                self._cache[cache_key] = text
            out.append(text)
        return out

    def _entry(
        self,
        root: CommentedMap,
        section: str,
        entries: CommentedMap,
        entry_key: Any,
        first_entry: bool,
        first_top: bool,
    ) -> str:
        header = f"{section}:\n"
        # The plainest entries are written directly (the same bytes, ~40x faster).
        if not (first_entry and _has_header_comments(root, section, first_top)):
            text = entry_text(entries, entry_key, first=first_entry)
            if text is not None:
                return header + text if first_entry else text
        inner = _wrap(entries, entry_key, entries[entry_key], first_entry)
        if first_entry:
            # The document comment (first key only) and the section's header comments.
            text = dump_yaml(_wrap(root, section, inner, first_top), self._yaml)
        else:
            bare = CommentedMap()
            bare[section] = inner
            text = dump_yaml(bare, self._yaml)
            if not text.startswith(header):
                raise _Unsplittable(section)
            text = text[len(header) :]
        _check_fragment(text, section)
        return text


def _check_fragment(text: str, key: str) -> None:
    """Refuse a fragment with a document marker anywhere but at its very end."""
    body = text[: -len(_DOCUMENT_END) + 1] if text.endswith(_DOCUMENT_END) else text
    if body.startswith(("...\n", "---")) or "\n...\n" in body or "\n---" in body:
        raise _Unsplittable(key)


def _wrap(parent: CommentedMap, key: Any, value: Any, first: bool) -> CommentedMap:
    """A one-key map holding ``value`` plus the comments ``parent`` keeps for ``key``.

    ``first``: also carry the comment ``parent`` holds before its first key.
    """
    wrapper = CommentedMap()
    wrapper[key] = value
    if key in parent.ca.items:
        wrapper.ca.items[key] = parent.ca.items[key]
    if first and parent.ca.comment:
        wrapper.ca.comment = parent.ca.comment
    return wrapper


def _has_header_comments(root: CommentedMap, section: str, first_top: bool) -> bool:
    """Whether a section's first fragment carries comments: on its key line or under
    it, or (first key of the document) the document's leading comment."""
    return section in root.ca.items or bool(first_top and root.ca.comment)


def _splittable(value: Any) -> bool:
    return (
        isinstance(value, CommentedMap)
        and len(value) > 0
        and not value.fa.flow_style()
        and not value.ca.end
    )


def _needs_full_dump(root: CommentedMap) -> bool:
    return bool(root.ca.end) or root.fa.flow_style()
