"""The lines and sentences the spec reader (:mod:`.spec`) recognises.

Every pattern matches a *whole* line or sentence: a phrase inside a step is part
of the step, so "after that, save it" stays a step while "After Intake." is a
dependency.
"""

from __future__ import annotations

import re

# "## Coverage check", "# Referral intake system" (trailing #s allowed).
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*#*\s*$")
# "1. Coverage check", "2) Coverage check" at the start of a line (no indent).
NUMBERED = re.compile(r"^(?P<number>\d{1,2})\s*[.)]\s+(?P<text>\S.*?)\s*$")
# A step of a list: "- ...", "* ...", "• ...", "1. ...", "a) ...", "(1) ...".
ITEM = re.compile(
    r"^\s*(?:[-*•+]|\d{1,2}\s*[.)]|\(\d{1,2}\)|[a-h][.)]|step\s+\d{1,2}\s*[:.)-])\s+"
    r"(?P<text>\S.*?)\s*$",
    re.I,
)
# "Intake:" or "**Intake**" alone on a line (no indent): a section in a text with no headings.
NAME_LINE = re.compile(r"^(?:\*\*(?P<bold>[^*]+?)\*\*:?|(?P<colon>[A-Z][^:.!?*#]{0,60}):)\s*$")
# "1. Intake" or "Process 1: Intake" inside a heading: the number is not part of the name.
HEADING_NUMBER = re.compile(
    r"^(?:(?:process|workflow|section|part|step)\s+)?\d{1,2}\s*[.):-]?\s+(?=\S)", re.I
)
# "Coverage check (after Intake)": what the brackets say is read as a line of the section.
HEADING_NOTE = re.compile(r"^(?P<name>.+?)\s*\((?P<note>[^()]+)\)\s*:?\s*$")
# "Purpose: ...", "Trigger: ...": a labelled line. The label decides what the value is.
LABELLED = re.compile(
    r"^(?P<label>purpose|goal|description|trigger|schedule|runs?|starts?|depends\s+on"
    r"|dependencies|after|uses|needs|inputs?|receives|outputs?|produces|hands\s+over|steps)"
    r"\s*:\s*(?P<value>.*?)\s*$",
    re.I,
)
LABELS = {
    "purpose": "purpose",
    "goal": "purpose",
    "description": "purpose",
    "trigger": "trigger",
    "schedule": "trigger",
    "run": "trigger",
    "runs": "trigger",
    "start": "trigger",
    "starts": "trigger",
    "depends on": "depends",
    "dependencies": "depends",
    "after": "depends",
    "uses": "depends",
    "needs": "depends",
    "input": "inputs",
    "inputs": "inputs",
    "receives": "inputs",
    "output": "outputs",
    "outputs": "outputs",
    "produces": "outputs",
    "hands over": "outputs",
    "steps": "steps",
}

_IT = r"(?:(?:this|it|the\s+workflow|this\s+workflow|this\s+process)\s+)?"
_DONE = r"(?:\s+(?:is|has|have|are)\s+(?:been\s+)?(?:done|finished|complete|completed|run))"
_KIND = r"(?:\s+(?:workflow|process|section|step))?"
# "After Intake", "Runs after Intake has finished", "Only after the Intake workflow".
AFTER = re.compile(
    rf"^{_IT}(?:(?:runs?|starts?|comes?|happens?|begins?|goes)\s+)?(?:only\s+)?after\s+"
    rf"(?P<ref>.+?){_KIND}{_DONE}?$",
    re.I,
)
# "Once Intake is done".
ONCE = re.compile(rf"^{_IT}(?:(?:runs?|starts?)\s+)?once\s+(?P<ref>.+?){_KIND}{_DONE}$", re.I)
# "Uses Intake's result", "Uses the referral from Intake", "Uses the result of Intake".
USES = re.compile(
    rf"^{_IT}(?P<verb>uses?|needs?|takes?|reads?|works\s+on)\s+(?:the\s+)?"
    r"(?:(?P<ref>[^,]+?)(?:'s|’s|')\s+(?P<data>[^,]+?)"
    r"|(?P<data2>results?|outputs?|data)\s+(?:of|from)\s+(?P<ref2>[^,]+?)"
    r"|(?P<data3>[^,]+?)\s+from\s+(?P<ref3>[^,]+?)"
    r"|(?P<ref4>[^,]+?)\s+(?P<data4>results?|outputs?|data))$",
    re.I,
)
_REVIEWER = r"(?:a|an|the|our)\s+(?P<who>[a-z][a-z -]{1,40}?)"
_REVIEWS = (
    r"(?:has\s+)?(?:reviews?|reviewed|approves?|approved|signs?\s+off\s+on|signed\s+off\s+on"
    r"|checks?|checked)"
)
# "After the coordinator reviews Intake's result", "Once a supervisor approves Intake":
# a dependency whose result a person decides on first (a review gate between the two).
REVIEWED_AFTER = re.compile(
    rf"^{_IT}(?:(?:runs?|starts?|comes?|happens?|begins?)\s+)?(?:only\s+)?(?:after|once|when)"
    rf"\s+{_REVIEWER}\s+{_REVIEWS}\s+(?P<ref>.+?)$",
    re.I,
)
# "Reviewed by the coordinator first", "Must be approved by a supervisor".
REVIEWED_BY = re.compile(
    rf"^{_IT}(?:is\s+|must\s+be\s+|needs\s+to\s+be\s+|has\s+to\s+be\s+)?(?:reviewed|approved"
    rf"|signed\s+off)\s+by\s+{_REVIEWER}(?:\s+first)?$",
    re.I,
)
# What a reviewed reference says about the data: "Intake's result", "the result of Intake".
REVIEWED_DATA = re.compile(
    r"(?:(?:'s|’s)\s+(?:results?|outputs?|data|\w+)$)|^(?:the\s+)?(?:results?|outputs?)\s+of\s+",
    re.I,
)
# "Depends on Intake and Coverage check".
DEPENDS = re.compile(rf"^{_IT}(?:depends|relies|waits)\s+(?:on|for)\s+(?P<ref>.+)$", re.I)
# "Intake's result" inside a step: a dependency when Intake is a section.
POSSESSIVE = re.compile(
    r"(?P<ref>[A-Z][\w-]*(?:\s+[\w-]+){0,4}?)(?:'s|’s)\s+(?:results?|outputs?)\b"
)
GENERIC_DATA = re.compile(r"^(?:results?|outputs?|data)$", re.I)
LIST_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*;\s*", re.I)
# "Runs on a webhook", "Webhook", "Starts when a referral arrives" (a whole sentence).
WEBHOOK_LINE = re.compile(
    rf"^{_IT}(?:(?:runs?|starts?|is\s+triggered|is\s+started)\s+)?(?:on|by|via|from|with)?\s*"
    r"(?:an?\s+)?(?:incoming\s+)?webhook(?:\s+trigger)?$"
    rf"|^{_IT}(?:runs?|starts?)\s+(?:when|whenever)\s+[^,]+\s+(?:arrives?|comes\s+in|is\s+"
    r"(?:received|submitted|created|posted|sent))$",
    re.I,
)
# What is left of a schedule sentence once the schedule is read: "Runs", "It runs", "".
RUN_WORDS = re.compile(
    rf"^{_IT}(?:should\s+)?(?:runs?|starts?|happens?|is\s+run|repeats?|on\s+a\s+schedule)?"
    r"\s*(?:on\s+a\s+schedule)?[\s,:]*$",
    re.I,
)
# "This workflow ...", "Receives new referrals": a description, not an imperative step.
DESCRIPTION_START = re.compile(
    r"^(?:this\s+(?:workflow|process|section|one)|it|here\s+we|the\s+goal|the\s+purpose)\b",
    re.I,
)
SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
REFERENCE_NOISE = re.compile(
    r"^(?:the\s+)?[\"'“]?|[\"'”]?(?:\s+(?:workflow|process|section|step))?$", re.I
)
