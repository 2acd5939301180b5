"""Validation of 5-field cron expressions (minute hour day-of-month month day-of-week)."""

from __future__ import annotations

import re

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    (
        "month",
        1,
        12,
        {
            m: i + 1
            for i, m in enumerate(
                ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
            )
        },
    ),
    (
        "day of week",
        0,
        7,
        {d: i for i, d in enumerate(_DAYS)},
    ),
)
_NUMBER = re.compile(r"^\d+$")


def cron_problem(expression: str) -> str | None:
    """Return why ``expression`` is not a valid 5-field cron expression, or None."""
    parts = expression.split()
    if len(parts) != 5:
        return f"a cron expression has 5 fields (minute hour day month weekday); got {len(parts)}"
    for part, (label, low, high, names) in zip(parts, _FIELDS, strict=True):
        for item in part.split(","):
            problem = _item_problem(item.lower(), low, high, names)
            if problem:
                return f"{label} field {part!r}: {problem}"
    return None


def _item_problem(item: str, low: int, high: int, names: dict[str, int]) -> str | None:
    if not item:
        return "empty list item"
    base, _, step = item.partition("/")
    if step and (not _NUMBER.match(step) or int(step) == 0):
        return f"step {step!r} must be a positive number"
    if base == "*":
        return None
    start, dash, end = base.partition("-")
    values = [start, end] if dash else [start]
    parsed: list[int] = []
    for value in values:
        if value in names:
            parsed.append(names[value])
        elif _NUMBER.match(value):
            parsed.append(int(value))
        else:
            return f"{value!r} is not a number"
    for number in parsed:
        if not low <= number <= high:
            return f"{number} is outside {low}-{high}"
    if len(parsed) == 2 and parsed[0] > parsed[1]:
        return f"range {base!r} runs backwards"
    return None
