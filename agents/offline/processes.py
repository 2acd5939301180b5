"""Several processes in one message of an editing session (issue 23's routing).

A spec with a section per process ("## Intake" … "## Coverage check" …, or numbered /
"Name:" lines each over lines of their own, the plan-mode spec format of
:mod:`.spec_layout`) pasted into a workflow's chat is not one workflow: the offline
model calls ``offer_plan_mode`` with the sections' names and changes nothing, so the
user can send it again as a plan. Only that layout counts: a list of steps, a title over
one list, or prose are one process and are read as usual.
"""

from __future__ import annotations

from agents.offline.plan import Outcome, Plan, call
from agents.offline.spec_layout import split
from tools.edits.offer_plan_mode import TOOL as OFFER_PLAN_MODE


def sections(text: str) -> list[str]:
    """The names of the processes ``text`` lays out, when it lays out two or more, each
    with lines of its own; [] otherwise."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    found = split(lines)[2]
    if len(found) < 2 or any(not any(line.strip() for line in s.lines) for s in found):
        return []
    return [s.name for s in found]


def offer(text: str) -> Outcome | None:
    names = sections(text)
    if not names:
        return None
    return Plan([call(OFFER_PLAN_MODE.name, processes=names[:30])])
