"""5-field cron expressions (minute hour day-of-month month day-of-week), read by croniter.

croniter parses and steps through schedules; what it accepts beyond what OpenFn's
scheduler takes is refused here first: a sixth (seconds) or seventh (year) field,
Quartz extras (``L``, ``W``, ``#``, ``?``), ``@daily``-style names, and a range that
runs backwards (croniter wraps ``5-1`` round; a crontab line refuses it).

:func:`next_runs` steps a valid expression forward from a given time; :func:`upcoming`
says a cron trigger's next runs in words (the offline model's ``describe``, counted from
its request's time). There is no clock here: each caller passes the time from its own
(``GET /v1/cron/next-runs`` the store's, a turn its runtime's).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime

from croniter import CroniterBadDateError, CroniterError, croniter

FIELDS = ("minute", "hour", "day of month", "month", "day of week")
MAX_EXPRESSION_CHARS = 1000
"""Longer than any expression needs (every value of every field listed is ~360
characters); a longer one is refused before croniter reads it."""
_EXTENSION = re.compile(r"[?#@]|(?<![a-z])[lw](?![a-z])", re.I)
_RANGE = re.compile(r"^(?P<start>[a-z0-9]+)-(?P<end>[a-z0-9]+)$", re.I)


def cron_problem(expression: str) -> str | None:
    """Return why ``expression`` is not a 5-field cron expression OpenFn can schedule, or None."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        return f"a cron expression is at most {MAX_EXPRESSION_CHARS} characters long"
    parts = expression.split()
    if len(parts) != len(FIELDS):
        return f"a cron expression has 5 fields (minute hour day month weekday); got {len(parts)}"
    for index, part in enumerate(parts):
        problem = _field_problem(index, part.lower())
        if problem:
            return f"{FIELDS[index]} field {part!r}: {problem}"
    try:
        croniter(" ".join(parts)).get_next(datetime)
    except CroniterBadDateError:
        return "no date ever matches it (check the day of month against the month)"
    return None


def next_runs(expression: str, after: datetime, count: int = 3) -> list[datetime]:
    """The next ``count`` times a valid ``expression`` fires after ``after`` (same timezone)."""
    schedule = croniter(expression, after)
    return [schedule.get_next(datetime) for _ in range(count)]


def runs_text(runs: list[datetime]) -> str:
    """``Mon 8 Dec 07:00, Tue 9 Dec 07:00 and Wed 10 Dec 07:00 UTC`` (times in UTC)."""
    words = [f"{t:%a} {t.day} {t:%b} {t:%H:%M}" for t in (r.astimezone(UTC) for r in runs)]
    listed = ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)
    return f"{listed} UTC" if words else ""


def upcoming(trigger: Mapping[str, object], *, now: datetime, count: int = 3) -> str:
    """`` Next runs: …`` after ``now`` for an enabled cron trigger whose expression is
    valid, else ``""`` (OpenFn runs cron in UTC)."""
    expression = str(trigger.get("cron_expression") or "")
    if trigger.get("type") != "cron" or not trigger.get("enabled") or cron_problem(expression):
        return ""
    runs = next_runs(" ".join(expression.split()), now.astimezone(UTC), count)
    return f" Next runs: {runs_text(runs)}."


def _field_problem(index: int, part: str) -> str | None:
    """Why one field is refused: croniter judges values, names and steps in the field's place."""
    if any(not item for item in part.split(",")):
        return "empty list item"
    if extra := _EXTENSION.search(part):
        return f"{extra.group(0)!r} is an extension OpenFn's scheduler does not take"
    alone = " ".join(part if i == index else "*" for i in range(len(FIELDS)))
    try:
        croniter(alone)
    except CroniterError as exc:
        return _reason(str(exc))
    for item in part.split(","):
        bounds = _RANGE.match(item.partition("/")[0])
        if bounds and _value(index, bounds["start"]) > _value(index, bounds["end"]):
            return f"range {bounds.group(0)!r} runs backwards"
    return None


def _value(index: int, token: str) -> int:
    """A field token as croniter numbers it (names through its own table)."""
    names: dict[str, int] = croniter.ALPHACONV[index]
    return names[token] if token in names else int(token)


def _reason(message: str) -> str:
    """croniter's words without the echoed expression (``[* * 0 * *] is not acceptable, …``)."""
    detail = message.rpartition("]")[2].strip(" ,")
    detail = detail.removeprefix("is not acceptable").strip(" ,")
    return detail or "not a value this field takes"
