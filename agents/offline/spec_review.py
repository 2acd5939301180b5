"""A spec section's review line: "After the coordinator reviews Intake's result",
"Once a supervisor approves Intake", "Reviewed by the coordinator first".

The section then starts on the reviewer's decision about what the sections it depends
on hand over: a ``review`` contract (``tools.plan.model.contracts``), built as a review
gate (``tools.plan.review_gate``). A review with no dependency has nothing to review and
is refused by the plan check (``review_without_source``).
"""

from __future__ import annotations

from collections.abc import Callable

from agents.offline import spec_patterns as P
from agents.offline.spec_layout import Section


def read_review(
    section: Section,
    unit: str,
    refs: Callable[[str], list[str] | None],
    problem: Callable[[str], None],
) -> bool:
    """Whether ``unit`` is a review line (then it is read into ``section``). ``refs`` gives
    the keys of the sections a reference names (None: it names none)."""
    by = P.REVIEWED_BY.match(unit)
    after = P.REVIEWED_AFTER.match(unit) if by is None else None
    match = by or after
    if match is None:
        return False
    who = " ".join(match.group("who").lower().split())
    if section.review_by not in (None, who):
        problem(f'"{section.name}" names two reviewers: {section.review_by} and {who}.')
    section.review_by = who
    if after is not None:
        ref = after.group("ref").strip()
        keys = refs(P.REVIEWED_DATA.sub("", ref).strip())
        if keys is None:
            problem(f'"{section.name}" is reviewed after "{ref}", but no section is called that.')
        else:
            section.depends += [(key, None) for key in keys]
    return True
