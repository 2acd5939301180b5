"""Applying the ``edit_job_code`` tool's edits to a body: exact, unique matches or nothing."""

from __future__ import annotations

from collections.abc import Sequence

from tools.errors import CodeEditError
from tools.jobcode.parse import CodeEdit

_NOT_CHANGED = "the code was not changed"


def apply_code_edits(body: str, edits: Sequence[CodeEdit]) -> str:
    """Apply ``edits`` in order to the current body and return the new body.

    ``rewrite`` replaces the whole body with ``new_code``; ``replace`` swaps
    ``old_code`` for ``new_code`` and requires ``old_code`` to occur exactly
    once in the text as it stands after the earlier edits. All or nothing: on
    any error a :class:`CodeEditError` is raised and nothing is applied. The
    body's trailing-newline convention is kept.
    """
    if not edits:
        raise CodeEditError(f"no edits were given; {_NOT_CHANGED}", code="no_edits")
    total = len(edits)
    current = body
    for index, edit in enumerate(edits, start=1):
        where = f"edit {index} of {total}" if total > 1 else "the edit"
        if edit.action == "rewrite":
            current = edit.new_code
            continue
        if edit.action != "replace":
            raise CodeEditError(
                f"{where}: unknown action {edit.action!r} (use 'replace' or 'rewrite'); "
                f"{_NOT_CHANGED}",
                code="invalid_action",
                edit_index=index,
            )
        old = edit.old_code
        if not old:
            raise CodeEditError(
                f"{where}: action 'replace' needs a non-empty old_code (the exact text to "
                f"replace); use action 'rewrite' to replace the whole body; {_NOT_CHANGED}",
                code="old_code_required",
                edit_index=index,
            )
        positions = _occurrences(current, old)
        if not positions:
            raise CodeEditError(
                f"{where}: old_code was not found in the current code"
                f"{_not_found_hint(current, old)}; copy old_code exactly from the current "
                f"code (including whitespace); {_NOT_CHANGED}",
                code="old_code_not_found",
                edit_index=index,
            )
        if len(positions) > 1:
            lines = ", ".join(str(current.count("\n", 0, p) + 1) for p in positions[:10])
            raise CodeEditError(
                f"{where}: old_code occurs {len(positions)} times in the current code "
                f"(starting on lines {lines}); include more surrounding code so it matches "
                f"exactly once; {_NOT_CHANGED}",
                code="old_code_ambiguous",
                edit_index=index,
                occurrences=len(positions),
            )
        start = positions[0]
        current = current[:start] + edit.new_code + current[start + len(old) :]
    return _keep_trailing_newline(body, current)


def _occurrences(text: str, needle: str) -> list[int]:
    """Start offsets of ``needle`` in ``text``, overlapping matches included."""
    positions = []
    start = text.find(needle)
    while start != -1:
        positions.append(start)
        start = text.find(needle, start + 1)
    return positions


def _not_found_hint(text: str, old: str) -> str:
    stripped = old.strip()
    if stripped and stripped != old and len(_occurrences(text, stripped)) == 1:
        return " (it does occur once without its leading/trailing whitespace)"
    old_lines = [line.strip() for line in old.splitlines() if line.strip()]
    if not old_lines:
        return ""
    text_lines = [line.strip() for line in text.splitlines()]
    first = old_lines[0]
    matches = [i + 1 for i, line in enumerate(text_lines) if line == first]
    if not matches:
        return ""
    numbers = ", ".join(str(n) for n in matches[:5])
    if len(old_lines) == 1:
        return f" (a line with the same text but different indentation is at line {numbers})"
    return (
        f" (its first line matches line {numbers} of the current code, but the following "
        "lines differ)"
    )


def _keep_trailing_newline(original: str, result: str) -> str:
    if result == "" or original == "":
        return result
    if original.endswith("\n"):
        if not result.endswith("\n"):
            result += "\r\n" if original.endswith("\r\n") else "\n"
        return result
    while result.endswith("\n"):
        result = result[:-2] if result.endswith("\r\n") else result[:-1]
    return result
