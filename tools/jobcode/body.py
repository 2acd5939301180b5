"""Small questions about a body: does it hold code, how many lines, which operations."""

from __future__ import annotations

from tools.jobcode.lint import operation_name
from tools.jobcode.parse import Source, decode


def _code_lines(body: str) -> list[str]:
    """The body's lines with comments blanked out (per the parse tree)."""
    source = Source(body)
    data = bytearray(source.data)
    for comment in source.captures().get("comment", []):
        for i in range(comment.start_byte, comment.end_byte):
            if data[i] not in (0x0A, 0x0D):
                data[i] = 0x20
    return decode(bytes(data)).split("\n")


def body_line_count(body: str) -> int:
    """Lines holding code: neither blank nor comment-only."""
    if not body or not body.strip():
        return 0
    return sum(1 for line in _code_lines(body) if line.strip())


def has_code(body: str | None) -> bool:
    """False for None, empty, whitespace-only or comment-only bodies."""
    if body is None or not body.strip():
        return False
    return any(line.strip() for line in _code_lines(body))


def top_level_operations(body: str) -> list[str]:
    """Names of the operations called at the top level, in order.

    ``get(...).then(...)`` counts as ``get``; namespaced operations keep their
    namespace (``collections.get``). Statements that are not operation calls
    are skipped.
    """
    source = Source(body)
    names: list[str] = []
    for statement in source.root.named_children:
        if statement.type != "expression_statement" or not statement.named_child_count:
            continue
        name = operation_name(source, statement.named_children[0])
        if name is not None:
            names.append(name)
    return names
