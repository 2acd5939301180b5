"""Schedules and triggers in plain English.

"every day at 9", "weekdays at 7:30", "every 15 minutes", "hourly", "on the
first of the month", "every monday at 8am", "cron 0 7 * * 1-5" become 5-field
cron expressions; "use a webhook" and "enable/disable the trigger" become
``set_trigger`` calls.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline.grammar import words
from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.view import View
from tools.document.cron import cron_problem

_HOURS = words("one two three four five six seven eight nine ten eleven twelve")
_MINUTES = {
    "oh one": 1, "oh two": 2, "oh three": 3, "oh four": 4, "oh five": 5, "oh six": 6,
    "oh seven": 7, "oh eight": 8, "oh nine": 9, "ten": 10, "fifteen": 15, "twenty": 20,
    "twenty five": 25, "thirty": 30, "thirty five": 35, "forty": 40, "forty five": 45,
    "fifty": 50, "fifty five": 55,
}  # fmt: skip
_HOUR_WORD = rf"(?:{'|'.join(_HOURS)})(?![\w-])"
_MINUTE_WORD = "|".join(sorted((m.replace(" ", r"[\s-]") for m in _MINUTES), key=len, reverse=True))
_AM_PM = r"(?:\s*(?:am|pm|a\.m\.|p\.m\.))"
# A time in words, read only when it can mean one time: "seven", "nine thirty", "six
# o'clock", "half past six", "quarter to eight".
_WORD_TIME = (
    rf"(?:(?:half|quarter)\s+past|quarter\s+to)\s+{_HOUR_WORD}{_AM_PM}?"
    rf"|{_HOUR_WORD}(?!\s+of\b)(?:[\s-]+(?:{_MINUTE_WORD})(?![\w-]))?(?:\s*o'?clock)?{_AM_PM}?"
)
TIME = (
    r"(?:noon|midday|midnight|\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?(?:\s*o'?clock)?"
    rf"|{_WORD_TIME})"
)
_DAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?"
_DAY_NUMBERS = {"mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6, "sun": 0}
_DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_PERIODS: list[tuple[str, str]] = [
    (
        "cron",
        r"\bcron(?:\s+expression)?\s*(?:of|=|:|to)?\s*['\"]?"
        r"(?P<expr>[\d*/,\-a-z]+(?:\s+[\d*/,\-a-z]+){4})['\"]?",
    ),
    (
        "minutes",
        r"\bevery\s+(?:(?P<n>\d+)\s*(?:minutes?|mins?)|minute|half\s+(?:an\s+)?hour"
        r"|quarter\s+(?:of\s+an\s+)?hour)\b",
    ),
    ("hours", r"\b(?:every\s+(?P<n>\d+)\s*(?:hours?|hrs?)|hourly|every\s+hour|once\s+an\s+hour)\b"),
    (
        "weekdays",
        r"\b(?:(?:every|each|on)\s+)?(?:weekdays?|working\s+days?|business\s+days?"
        r"|mon(?:day)?\s*(?:-|to|through|thru)\s*fri(?:day)?)\b",
    ),
    ("weekends", r"\b(?:(?:every|each|on)\s+)?(?:the\s+)?weekends?\b"),
    (
        "days",
        rf"\b(?:(?:every|each|on)\s+)?(?P<days>{_DAY}(?:\s*(?:,|and|&|\+)\s*{_DAY})*)\b",
    ),
    (
        "monthly",
        r"\b(?:(?:on\s+)?the\s+(?P<dom>first|1st|\d{1,2}(?:st|nd|rd|th)?)(?:\s+day)?\s+of\s+"
        r"(?:the|each|every)\s+month|(?:monthly|every\s+month|once\s+a\s+month)(?:,?\s+on\s+the"
        r"\s+(?P<dom2>first|1st|\d{1,2}(?:st|nd|rd|th)?)(?:\s+day)?)?)\b",
    ),
    (
        "daily",
        r"\b(?:every\s+(?P<part>day|morning|evening|night)|daily|each\s+(?P<part2>day|morning"
        r"|evening|night)|nightly|every\s+24\s+hours|once\s+a\s+day)\b",
    ),
    ("weekly", r"\b(?:weekly|every\s+week|once\s+a\s+week)\b"),
]
_AFTER = re.compile(
    rf"^\s*,?\s*(?:at|@|around|by)\s+(?P<time>{TIME})(?P<part>\s+in\s+the\s+"
    r"(?:morning|afternoon|evening)|\s+at\s+night)?",
    re.I,
)
_BEFORE = re.compile(rf"(?:at|@)\s+(?P<time>{TIME})\s*,?\s*$", re.I)
_BARE_TIME = re.compile(rf"\b(?:at|@)\s+(?P<time>{TIME})\b", re.I)


@dataclass(frozen=True)
class Schedule:
    cron: str
    start: int
    end: int


def parse_time(text: str) -> tuple[int, int] | None:
    text = text.lower().replace(".", ":").replace("a:m:", "am").replace("p:m:", "pm").strip()
    if text in ("noon", "midday"):
        return 12, 0
    if text == "midnight":
        return 0, 0
    words = _word_time(text)
    if words is not None:
        return words
    match = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)?(?:\s*o'?clock)?", text)
    if not match:
        return None
    hour, minute = int(match.group(1)), int(match.group(2) or 0)
    return _in_day(hour, minute, match.group(3))


def _in_day(hour: int, minute: int, half: str | None) -> tuple[int, int] | None:
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    return hour, minute


def _word_time(text: str) -> tuple[int, int] | None:
    """ "nine thirty" -> (9, 30), "half past six pm" -> (18, 30), "quarter to eight" -> (7, 45)."""
    text = " ".join(text.replace("-", " ").split())
    half = re.search(r"\s*(am|pm)$", text)
    if half:
        text = text[: half.start()]
    text = re.sub(r"\s*o'?clock$", "", text)
    relative = re.fullmatch(r"(half|quarter) (past|to) (\w+)", text)
    if relative:
        if relative.group(3) not in _HOURS:
            return None
        hour = _HOURS.index(relative.group(3)) + 1
        minute = 30 if relative.group(1) == "half" else 15
        if relative.group(2) == "to":
            hour, minute = (hour - 1) or 12, 60 - minute
        return _in_day(hour, minute, half.group(1) if half else None)
    head, _, tail = text.partition(" ")
    if head not in _HOURS or (tail and tail not in _MINUTES):
        return None
    hour = _HOURS.index(head) + 1
    return _in_day(hour, _MINUTES[tail] if tail else 0, half.group(1) if half else None)


# A frequency word after a determiner describes a thing, not when the workflow runs:
# "post the daily totals", "send our weekly report", "a monthly summary".
_FREQUENCY_WORD = re.compile(r"(?:hourly|daily|nightly|weekly|monthly|yearly|annual)", re.I)
_DETERMINER_BEFORE = re.compile(
    r"\b(?:the|a|an|our|their|your|my|its|his|her|this|that|these|those)\s+$", re.I
)


def _attributive(text: str, match: re.Match[str]) -> bool:
    """Whether ``match`` is a bare frequency word used as an adjective ("the daily totals")."""
    return bool(
        _FREQUENCY_WORD.fullmatch(match.group(0))
        and _DETERMINER_BEFORE.search(text[: match.start()])
    )


def find_schedule(text: str, *, bare_time: bool = False) -> Schedule | None:
    """The first schedule phrase in ``text`` and its span."""
    best: Schedule | None = None
    named_days = re.search(_PERIODS[5][1], text, re.I) is not None
    for kind, pattern in _PERIODS:
        match = next(
            (m for m in re.finditer(pattern, text, re.I) if not _attributive(text, m)), None
        )
        if not match or (kind == "weekly" and named_days):
            continue
        if kind == "cron":
            expr = " ".join(match.group("expr").split())
            if cron_problem(expr) is None:
                return Schedule(expr, match.start(), match.end())
            continue
        start, end = match.start(), match.end()
        hour_minute: tuple[int, int] | None = None
        evening = False
        after = _AFTER.match(text[end:])
        if after:
            hour_minute = parse_time(after.group("time"))
            evening = bool(after.group("part")) and "morning" not in after.group("part")
            if hour_minute is not None:
                end += after.end()
        if hour_minute is None:
            before = _BEFORE.search(text[:start])
            if before:
                hour_minute = parse_time(before.group("time"))
                if hour_minute is not None:
                    start = before.start()
        cron = _cron(kind, match, hour_minute, evening)
        if cron is not None and (best is None or start < best.start):
            best = Schedule(cron, start, end)
    if best is None and bare_time:
        match = _BARE_TIME.search(text)
        parsed = parse_time(match.group("time")) if match else None
        if match and parsed is not None:
            return Schedule(f"{parsed[1]} {parsed[0]} * * *", match.start(), match.end())
    return best


def _cron(kind: str, match: re.Match[str], at: tuple[int, int] | None, evening: bool) -> str | None:
    groups = match.groupdict()
    part = (groups.get("part") or groups.get("part2") or "").lower()
    default_hour = {"morning": 8, "evening": 18, "night": 0}.get(part, 0)
    hour, minute = at if at is not None else (default_hour, 0)
    if at is not None and (evening or part in ("evening", "night")) and 1 <= hour < 12:
        hour += 12
    hm = f"{minute} {hour}"
    if kind == "minutes":
        phrase = match.group(0).lower()
        n = int(groups["n"]) if groups.get("n") else 1
        n = 30 if "half" in phrase else 15 if "quarter" in phrase else n
        if not 1 <= n <= 59:
            return None
        return "* * * * *" if n == 1 else f"*/{n} * * * *"
    if kind == "hours":
        n = int(groups["n"]) if groups.get("n") else 1
        if not 1 <= n <= 23:
            return None
        return f"{minute if at else 0} * * * *" if n == 1 else f"0 */{n} * * *"
    if kind == "weekdays":
        return f"{hm} * * 1-5"
    if kind == "weekends":
        return f"{hm} * * 0,6"
    if kind == "days":
        days = re.findall(_DAY, groups["days"], re.I)
        numbers = sorted({_DAY_NUMBERS[d[:3].lower()] for d in days})
        return f"{hm} * * {','.join(str(n) for n in numbers)}"
    if kind == "monthly":
        dom_text = (groups.get("dom") or groups.get("dom2") or "1").lower()
        dom = 1 if dom_text in ("first", "1st") else int(re.sub(r"\D", "", dom_text))
        return f"{hm} {dom} * *" if 1 <= dom <= 31 else None
    if kind == "daily":
        return f"{hm} * * *"
    if kind == "weekly":
        return f"{hm} * * 1"
    return None


def describe_cron(expr: str) -> str:
    parts = expr.split()
    if len(parts) != 5:
        return f"cron '{expr}'"
    minute, hour, dom, month, dow = parts
    if parts == ["*", "*", "*", "*", "*"]:
        return "every minute"
    if minute.startswith("*/") and parts[1:] == ["*"] * 4:
        return f"every {minute[2:]} minutes"
    if minute.isdigit() and hour == "*" and parts[2:] == ["*"] * 3:
        return "every hour" if minute == "0" else f"every hour at {minute} past"
    if minute == "0" and hour.startswith("*/") and parts[2:] == ["*"] * 3:
        return f"every {hour[2:]} hours"
    if not (minute.isdigit() and hour.isdigit()) or month != "*":
        return f"cron '{expr}'"
    at = f"{int(hour):02d}:{int(minute):02d}"
    if dom == "*" and dow == "*":
        return f"every day at {at}"
    if dom == "*" and dow == "1-5":
        return f"on weekdays at {at}"
    if dom == "*" and dow in ("0,6", "6,0"):
        return f"on weekends at {at}"
    if dom == "*" and re.fullmatch(r"[0-7](,[0-7])*", dow):
        names = [_DAY_NAMES[int(d) % 7] for d in dow.split(",")]
        return "every " + " and ".join(names) + f" at {at}"
    if dow == "*" and dom.isdigit():
        return f"on day {dom} of every month at {at}"
    return f"cron '{expr}'"


def describe_trigger(trigger: dict[str, object]) -> str:
    state = "enabled" if trigger.get("enabled") else "disabled"
    if trigger.get("type") == "cron":
        return f"a schedule ({describe_cron(str(trigger.get('cron_expression', '')))}), {state}"
    return f"a webhook, {state}"


# --------------------------------------------------------------------------- commands

_TOGGLE = re.compile(
    r"^(?P<verb>enable|disable|turn on|turn off|switch on|switch off|activate|deactivate"
    r"|pause|resume|unpause)\s+(?:the\s+)?(?:workflow'?s?\s+)?(?:cron\s+|webhook\s+)?"
    r"(?P<what>trigger|schedule|cron|webhook|timer|workflow)(?:\s+trigger)?$"
    r"|^(?:turn|switch)\s+(?:the\s+)?(?:trigger|schedule|webhook|cron|workflow)\s+(?P<state>on|off)$",
    re.I,
)
_WEBHOOK = re.compile(
    r"^(?:use|add|set|set up|create|make it|make it use|switch to|switch it to|change it to"
    r"|change the trigger to|replace the (?:schedule|cron|trigger) with|(?:trigger|start|run)"
    r" (?:it|this|the workflow|this workflow)?\s*(?:with|by|from|via|on|using|through))\s+"
    r"(?:an?\s+|the\s+)?(?:http\s+)?webhook(?:\s+trigger)?(?:\s+instead)?$",
    re.I,
)
_CRON_LEAD = re.compile(
    r"^(?:(?:run|schedule|trigger|execute|start)(?:\s+(?:it|this|the\s+workflow|this\s+workflow))?"
    r"(?:\s+to\s+run)?(?:\s+on\s+a\s+schedule)?"
    r"|(?:change|set|update|switch|make|move)\s+(?:the\s+|its\s+)?(?:schedule|cron|trigger|timing)"
    r"(?:\s+to(?:\s+run)?|\s+so\s+(?:it|that\s+it)\s+runs)?"
    r"|(?:add|use|create|set\s+up|give\s+it)\s+(?:an?\s+)?(?:cron|schedule|scheduled|timer)"
    r"(?:\s+trigger)?(?:\s+(?:that\s+runs|to\s+run|for|at|on))?"
    r"|make\s+it\s+run|(?:it\s+should|should)\s+run|schedule:?|cron:?)?\s*(?:on|for|at)?$",
    re.I,
)
_ENABLE_TOO = re.compile(r",?\s+and\s+(?:enable|turn\s+on|activate|switch\s+on)\s+it\b", re.I)


def parse_trigger_command(text: str, view: View) -> Outcome | None:
    trigger = view.trigger()
    toggle = _TOGGLE.match(text)
    if toggle:
        if toggle.group("what") and toggle.group("what").lower() == "workflow" and not trigger:
            return None
        verb = (toggle.group("verb") or toggle.group("state") or "").lower()
        enabled = verb in ("enable", "turn on", "switch on", "activate", "resume", "unpause", "on")
        if not view.triggers:
            return Reply(
                "This workflow has no trigger yet, so there is nothing to "
                f"{'enable' if enabled else 'disable'}. Say e.g. 'run it every day at 9' or "
                "'use a webhook'. Nothing was changed."
            )
        if trigger is None:
            return Reply("This workflow has several triggers; I can only toggle a single one.")
        if bool(trigger.get("enabled")) == enabled:
            return Reply(
                f"The trigger is already {'enabled' if enabled else 'disabled'}; nothing changed."
            )
        return Plan(
            [call("set_trigger", type=trigger["type"], key=trigger["key"], enabled=enabled)],
            f"{'Enabling' if enabled else 'Disabling'} the trigger.",
        )
    if _WEBHOOK.match(text):
        return Plan([call("set_trigger", type="webhook")], "Setting a webhook trigger.")
    enable = bool(_ENABLE_TOO.search(text))
    text = _ENABLE_TOO.sub("", text)
    schedule = find_schedule(text, bare_time=True)
    if schedule is None:
        return None
    rest = (text[: schedule.start] + " " + text[schedule.end :]).strip(" ,.")
    if not _CRON_LEAD.match(" ".join(rest.split())):
        return None
    args: dict[str, object] = {"type": "cron", "cron_expression": schedule.cron}
    if enable:
        args["enabled"] = True
    return Plan(
        [call("set_trigger", **args)],
        f"Scheduling the workflow {describe_cron(schedule.cron)}.",
    )
