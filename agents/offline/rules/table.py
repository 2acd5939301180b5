"""The offline grammar, in the order the planner tries it.

1. message rules, on the whole message: test runs and "fix it", greeting, undo, start
   over, build;
2. questions, on the whole message (they never change anything);
3. commands, on each command of the message (split at sentences, ";", new lines,
   "and then"): edges, code, trigger, then step edits, with "add" last.

The first rule that answers wins (a rule answers None when the text is not for
it). ``SECTIONS`` orders the docs: the offline README's grammar tables and the capability
answer list each section's examples in table order.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.offline.rules import (
    code,
    credentials,
    edges,
    gates,
    messages,
    questions,
    runs,
    steps,
    trigger,
)
from agents.offline.rules.base import Rule

RULES: list[Rule] = [
    *runs.RULES,
    *gates.RULES,
    *messages.RULES,
    *questions.RULES,
    *credentials.RULES,
    *edges.RULES,
    *code.RULES,
    *trigger.RULES,
    *steps.RULES,
]


@dataclass(frozen=True)
class Section:
    """One table of the offline README (between ``<!-- grammar:start KEY -->`` and
    ``<!-- grammar:end KEY -->``) and one line of the capability answer (``label: "menu", ...``)."""

    key: str
    label: str
    answer: str = "It does"
    note: str = ""


SECTIONS = (
    Section(
        "build",
        "build",
        note='or a numbered list of steps ("1. ... 2. ..."), with "if ... otherwise ..." branches',
    ),
    Section("steps", "steps", "Tool calls"),
    Section("edges", "edges", "Tool calls"),
    Section("trigger", "trigger"),
    Section("code", "code"),
    Section("questions", "questions"),
    Section("other", ""),
)
