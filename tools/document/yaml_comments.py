"""Moving ruamel comments so they stay with what they describe.

ruamel attaches the comment lines that follow an entry to that entry's last
value. When entries are added, removed or emptied, those lines must move to
the neighbour (or section) they belong to, or they vanish with the entry or
land in the wrong place. These helpers read and write those comment slots.

Where ruamel holds them: the comment after a value is a token on the value's
parent, ``parent.ca.items[key][2]`` for a mapping and ``parent.ca.items[index][0]``
for a sequence; the comment after a block collection sits on its last value. The
token's text is the end-of-line comment (or nothing) up to the first newline,
then whole comment lines. After a block scalar (``|``, ``>``) there is no end of
line: the text is whole lines, the first one's indentation given as the token's
column. Comment lines moved around here are plain text, each line with its own
indentation.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.scalarstring import FoldedScalarString, LiteralScalarString
from ruamel.yaml.tokens import CommentToken

Container = CommentedMap | CommentedSeq
BLOCK_SCALARS = (LiteralScalarString, FoldedScalarString)
LINE_BREAKS = "\n\x85\u2028\u2029"
# ruamel writes the fields of an entry at this indentation (mapping indent 2).
FIELD_INDENT = 4


def is_block(value: Any) -> bool:
    return isinstance(value, BLOCK_SCALARS)


def open_ended(value: Any) -> bool:
    """A block scalar ruamel writes with keep chomping (``|+``): it ends in a blank line."""
    return (
        is_block(value)
        and value[-1:] in LINE_BREAKS
        and value != ""
        and (len(value) == 1 or value[-2] in LINE_BREAKS)
    )


def tail_slot(container: Container, key: Any) -> tuple[Container, Any]:
    """Where the comment after ``container[key]`` (and all it holds) lives."""
    value = container[key]
    while isinstance(value, (CommentedMap, CommentedSeq)) and value and not value.fa.flow_style():
        container = value
        key = next(reversed(value)) if isinstance(value, CommentedMap) else len(value) - 1
        value = container[key]
    return container, key


def slot_index(container: Container) -> int:
    return 0 if isinstance(container, CommentedSeq) else 2


def read_post(container: Container, key: Any) -> tuple[str, str, int]:
    """The comment after a value: (end-of-line comment, whole lines, end-of-line column)."""
    slots = container.ca.items.get(key)
    token = slots[slot_index(container)] if slots else None
    if not isinstance(token, CommentToken):
        return "", "", 0
    text = token.value
    if is_block(container[key]):
        indent = "" if text.startswith("\n") else " " * token.column
        return "", indent + text, 0
    eol, _, lines = text.partition("\n")
    return eol, lines, token.column


def write_post(
    container: Container, key: Any, eol: str, lines: str, column: int, *, line_indent: int = 0
) -> None:
    """Set the comment after a value, in the form its value needs."""
    if is_block(container[key]):
        if eol:  # no end of line after a block scalar: the comment gets a line of its own
            lines = f"{' ' * line_indent}{eol}\n{lines}"
        text = lines.lstrip(" ")
        column = len(lines) - len(text)
        if text.startswith("\n"):
            text, column = lines, 0
    else:
        text = f"{eol}\n{lines}" if eol or lines else ""
    set_post(container, key, text, column)


def take_lines(container: Container, key: Any) -> str:
    """Remove the whole comment lines after a value, keeping its end-of-line comment."""
    eol, lines, column = read_post(container, key)
    if lines:
        write_post(container, key, eol, "", column)
    return lines


def put_lines(container: Container, key: Any, lines: str) -> None:
    """Append whole comment lines after a value."""
    eol, existing, column = read_post(container, key)
    write_post(container, key, eol, existing + lines, column)


def set_post(container: Container, key: Any, text: str, column: int) -> None:
    index = slot_index(container)
    slots = container.ca.items.get(key)
    old = slots[index] if slots else None
    token = CommentToken(text, CommentMark(column)) if text else None
    if slots is None:
        if token is None:
            return
        slots = container.ca.items[key] = [None, None, None, None]
    slots[index] = token
    if not any(slots):
        del container.ca.items[key]
    # A collection value shares the token in its own ``ca.comment``; keep them in step.
    own = getattr(container[key], "ca", None)
    if own is not None and own.comment and own.comment[0] is old:
        own.comment[0] = token


def put_before(mapping: CommentedMap, key: Any, lines: str) -> None:
    """Put whole comment lines just above ``key``."""
    slots = mapping.ca.items.setdefault(key, [None, None, None, None])
    slots[1] = [CommentToken(lines, CommentMark(0)), *(slots[1] or ())]


def header_comments(root: CommentedMap, name: str) -> tuple[str, str, int]:
    """A section's header comments: (end-of-line comment, whole lines, its column)."""
    slots = root.ca.items.get(name) or [None, None, None, None]
    eol, lines, column = "", "", 0
    token = slots[2]
    if isinstance(token, CommentToken):
        eol, _, lines = token.value.partition("\n")
        column = token.column
    pre: list[Any] = list(slots[3] or ())
    own = getattr(root[name], "ca", None)
    if own is not None and own.comment and own.comment[1]:
        pre += [t for t in own.comment[1] if all(t is not p for p in pre)]
    for item in pre:
        if isinstance(item, CommentToken):
            lines += " " * item.column + item.value
    return eol, lines, column


def reopen_header(root: CommentedMap, name: str) -> str:
    """Before entries go into an empty section: keep its header lines as its header
    and return the lines meant for after it (from the first one at column 0)."""
    eol, lines, column = header_comments(root, name)
    if not lines:
        return ""
    rows = lines.splitlines(keepends=True)
    cut = next((i for i, row in enumerate(rows) if row.startswith("#")), len(rows))
    header, after = "".join(rows[:cut]), "".join(rows[cut:])
    slots = root.ca.items.setdefault(name, [None, None, None, None])
    slots[2] = slots[3] = None
    section = root[name]
    if isinstance(section, CommentedMap):
        section.ca.comment = None
    write_post(root, name, eol, header, column)
    if not any(slots):
        root.ca.items.pop(name, None)
    return after


def settle_open_ended(node: Any, after: tuple[CommentedMap, Any] | None) -> None:
    """Move comment lines after a keep-chomped block scalar above the key that follows.

    ruamel writes such a comment followed by a mid-document ``...`` marker, which
    does not load. Above the next key the lines are written in the same place, as
    valid YAML. ``after`` is the mapping key that follows ``node`` in the document.
    """
    if isinstance(node, CommentedMap):
        keys = list(node)
        for index, key in enumerate(keys):
            following = (node, keys[index + 1]) if index + 1 < len(keys) else after
            value = node[key]
            if isinstance(value, (CommentedMap, CommentedSeq)):
                settle_open_ended(value, following)
            elif following is not None and open_ended(value):
                lines = take_lines(node, key)
                if lines:
                    put_before(*following, lines)
    elif isinstance(node, CommentedSeq) and node:
        for item in node[:-1]:
            if isinstance(item, (CommentedMap, CommentedSeq)):
                settle_open_ended(item, None)
        settle_open_ended(node[-1], after)


def has_comments(root: CommentedMap, name: str) -> bool:
    slots = root.ca.items.get(name)
    own = getattr(root[name], "ca", None)
    return bool(
        (slots and any(slots))
        or (own is not None and ((own.comment and any(own.comment)) or own.end or own.items))
    )
