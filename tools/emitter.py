"""Incremental YAML emission.

A full ruamel dump of a 200-job document takes ~100 ms; a mutation touches one
or a few entries. The emitter dumps each top-level key, and each entry of the
``jobs``/``triggers``/``edges`` sections, as its own fragment inside a wrapper
that reproduces its nesting (and the comments its parent holds for it), then
caches the text. A mutation invalidates only the fragments it touched; the
document is the concatenation. Output is byte-identical to a full dump
(property-tested); shapes this scheme cannot reproduce exactly fall back to a
full dump.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap

from tools.structure import SECTIONS
from tools.yaml_io import dump_yaml, make_yaml

FragmentKey = tuple[Any, ...]


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

    def clear(self) -> None:
        self._cache.clear()

    def emit(self, root: Any) -> str:
        if not isinstance(root, CommentedMap) or not root or _needs_full_dump(root):
            return dump_yaml(root, self._yaml)
        parts: list[str] = []
        for index, key in enumerate(root):
            value = root[key]
            first_top = index == 0
            if key in SECTIONS and _splittable(value):
                parts.extend(self._section(root, key, value, first_top))
            else:
                parts.append(self._top(root, key, first_top))
        return "".join(parts)

    def _top(self, root: CommentedMap, key: str, first_top: bool) -> str:
        cache_key = ("top", key, first_top)
        text = self._cache.get(cache_key)
        if text is None:
            text = dump_yaml(_wrap(root, key, root[key], first_top), self._yaml)
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
                inner = _wrap(entries, entry_key, entries[entry_key], first_entry)
                text = dump_yaml(_wrap(root, section, inner, first_top), self._yaml)
                if not first_entry:
                    text = text.split("\n", 1)[1]  # drop the repeated "section:" header
                self._cache[cache_key] = text
            out.append(text)
        return out


def _wrap(parent: CommentedMap, key: Any, value: Any, first: bool) -> CommentedMap:
    """A one-key map holding ``value`` plus the comments ``parent`` keeps for ``key``."""
    wrapper = CommentedMap()
    wrapper[key] = value
    if key in parent.ca.items:
        wrapper.ca.items[key] = parent.ca.items[key]
    if first and parent.ca.comment:
        wrapper.ca.comment = parent.ca.comment
    return wrapper


def _splittable(value: Any) -> bool:
    return (
        isinstance(value, CommentedMap)
        and len(value) > 0
        and not value.fa.flow_style()
        and not value.ca.end
    )


def _needs_full_dump(root: CommentedMap) -> bool:
    return bool(root.ca.end) or root.fa.flow_style()
