"""A direct writer for the plainest entries, byte-identical to ruamel's dump.

ruamel's emitter costs ~0.4 ms per entry; a 3,000-job import has 6,000 entries
to emit (about 2.5 s), and so does the first edit of every document parsed
cold. Most entries are a flat mapping of short scalars with no comments, and
for those the YAML ruamel writes is fixed: ``  key:`` and then one
``    field: value`` line per field. :func:`entry_text` writes exactly that,
and answers ``None`` — the caller dumps through ruamel — for anything it
cannot be sure of: comments anywhere, nested values, flow style, anchors or
tags, scalars that need a style or escaping it does not reproduce. What it
writes is checked against ruamel's own dump by a property test
(``tests/tools/test_fast_emit.py``); the rules below mirror ruamel's
``Emitter.analyze_scalar`` and ``choose_scalar_style``, restricted to the
cases that need no judgement.
"""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import LiteralScalarString, SingleQuotedScalarString

_STR_TAG = "tag:yaml.org,2002:str"
# Printable without escaping (ruamel writes these raw, allow_unicode being on):
# ASCII 0x20-0x7E and the BMP outside surrogates, the BOM and the line breaks.
_PRINTABLE = r"\x20-\x7E\xA0-\u2027\u202A-\uD7FF\uE000-\uFEFE\uFF00-\uFFFD"
_ONE_LINE = re.compile(f"[{_PRINTABLE}]*")
_LINES = re.compile(f"[\n{_PRINTABLE}]*")
# A plain scalar may not start with an indicator (``-?:`` and ``.`` for "..."
# are left out whole: rare in names, and each has its own rule in ruamel).
_PLAIN_START = re.compile(r"[^\s#,\[\]{}&*!|>'\"%@`?:.\-]")
# Longer scalars may be split at spaces near the emitter's width, keys over 128
# characters are written as complex keys: neither is reproduced here.
_MAX_SCALAR = 512
_MAX_KEY = 100
# The YAML 1.2 implicit resolvers by first character, as ruamel's resolver picks
# them: a plain scalar that matches one reads back as a number, a boolean, etc.
_IMPLICIT: dict[str, list[tuple[Any, re.Pattern[str]]]] = VersionedResolver().versioned_resolver


def _reads_as_str(text: str) -> bool:
    """``VersionedResolver.resolve(ScalarNode, text, (True, False))`` is ``str``."""
    for tag, pattern in _IMPLICIT.get(text[0], ()):
        if pattern.match(text):
            return str(tag) == _STR_TAG
    return True


def _plain(text: str, limit: int = _MAX_SCALAR) -> bool:
    """Whether ruamel writes ``text`` (a plain ``str``) as a plain scalar, unquoted."""
    return (
        0 < len(text) <= limit
        and _PLAIN_START.match(text) is not None
        and text[-1] != " "
        and _ONE_LINE.fullmatch(text) is not None
        and ": " not in text
        and text[-1] != ":"
        and " #" not in text
        # Otherwise it reads back as a number, a boolean, a date or null: quoted.
        and _reads_as_str(text)
    )


_ALWAYS_INDICATORS = "#,[]{}&*!|>'\"%@`"


def _never_plain(text: str) -> bool:
    """Whether ruamel's ``analyze_scalar`` rules out a plain scalar for ``text`` (one
    line, not empty) in a block mapping's value, or it reads back as another type;
    only the rules that hold whatever else the text holds."""
    return (
        text[0] in _ALWAYS_INDICATORS
        or text[0] == " "
        or text[-1] in " :"
        or ": " in text
        or " #" in text
        or text.startswith(("---", "..."))
        or (text[0] in "-?:" and (len(text) == 1 or text[1] == " "))
        or not _reads_as_str(text)
    )


def _unmarked(value: Any) -> bool:
    """A scalar string that carries no comment and no anchor."""
    anchor = getattr(value, "anchor", None)
    return getattr(value, "comment", None) is None and getattr(anchor, "value", None) is None


def _literal(text: LiteralScalarString, indent: str) -> str | None:
    """``|`` or ``|-`` and the lines, or ``None`` where ruamel would add an
    indentation indicator (leading space or break) or keep trailing breaks (``|+``)."""
    if not _unmarked(text) or not text or text[0] in " \n" or text.endswith("\n\n"):
        return None
    if _LINES.fullmatch(text) is None or text == "\n":
        return None
    header = "|\n" if text.endswith("\n") else "|-\n"
    body = text[:-1] if text.endswith("\n") else text
    return header + "".join(f"{indent}{line}\n" if line else "\n" for line in body.split("\n"))


def _scalar(value: Any, indent: str) -> str | None:
    """The text after ``field:`` for a value, starting with its separator."""
    kind = type(value)
    if kind is str:
        if _plain(value):
            return f" {value}\n"
        # Never plain (see ``_never_plain``): ruamel single-quotes a one-line text
        # that holds no quote of its own.
        quotable = value and "'" not in value and len(value) <= _MAX_SCALAR
        if quotable and _ONE_LINE.fullmatch(value) and _never_plain(value):
            return f" '{value}'\n"
        return None
    if kind is bool:
        return " true\n" if value else " false\n"
    if kind is int:
        return f" {value}\n"
    if kind is SingleQuotedScalarString:
        if not _unmarked(value) or len(value) > _MAX_SCALAR:
            return None
        if _ONE_LINE.fullmatch(value) is None:
            return None
        quoted = value.replace("'", "''")
        return f" '{quoted}'\n"
    if kind is LiteralScalarString:
        block = _literal(value, indent)
        return None if block is None else " " + block
    return None


def _bare(mapping: Any) -> bool:
    """A block mapping that carries no comment, anchor, tag or merge of its own."""
    if type(mapping) is not CommentedMap or not mapping or mapping.fa.flow_style():
        return False
    ca = mapping.ca
    if ca.comment or ca.items or ca.end:
        return False
    if getattr(mapping.anchor, "value", None) is not None:
        return False
    if getattr(mapping.tag, "value", None) is not None:
        return False
    return not getattr(mapping, "merge", None)


def entry_text(entries: CommentedMap, key: Any, *, first: bool) -> str | None:
    """``key``'s entry of section mapping ``entries`` as ruamel dumps it under its
    section (``  key:`` and its fields), or ``None`` if it is not that plain.

    ``first``: the entry opens its section, so the comments ``entries`` holds before
    its first key would be written with it; there must be none."""
    if type(key) is not str or not _plain(key, _MAX_KEY) or key in entries.ca.items:
        return None
    if first and entries.ca.comment:
        return None
    value = entries[key]
    if not _bare(value):
        return None
    parts = [f"  {key}:\n"]
    for field, item in value.items():
        if type(field) is not str or not _plain(field, _MAX_KEY):
            return None
        text = _scalar(item, "      ")
        if text is None:
            return None
        parts.append(f"    {field}:{text}")
    return "".join(parts)
