"""Reply consistent with the real diff: claims of added/removed/renamed steps, or of no change.

The claims are read from the final reply with a few patterns ("added the step
"X"", "removed X", "renamed A to B", "nothing was changed") and checked
against what actually changed in the last turn. Claims the patterns cannot
read are left to the LLM judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline.words import (
    ADDED_VERBS,
    ARTICLES,
    NAME_ENDS,
    NAMING_WORDS,
    NOT_A_CLAIM,
    NOT_STEPS,
    NUMBER_WORDS,
    REMOVED_VERBS,
    STEP_NOUNS,
    alternation,
)
from evals.execute import RunOutcome
from evals.graders.base import GradeResult, norm
from evals.scenario import Scenario
from tools.document import WorkflowDocument
from tools.document.structure import Structure

_QUOTED = r"\"[^\"\n]+\"|“[^”\n]+”|'[^'\n]+'"
_FILLER = (
    rf"(?:(?:{alternation(ARTICLES)}|new|\d+|{alternation(NUMBER_WORDS)}|"
    rf"{alternation(STEP_NOUNS)}|{alternation(NAMING_WORDS)}):?\s+)*"
)
_ADD_REMOVE = re.compile(
    rf"\b({alternation(ADDED_VERBS + REMOVED_VERBS)})\b\s+({_FILLER})"
    rf"({_QUOTED}|[^\s.,;:!?()\n][^.,;:!?()\n]*)",
    re.IGNORECASE,
)
_RENAME = re.compile(
    rf"\brenamed\b\s+(?:the\s+)?(?:step\s+|job\s+)?({_QUOTED}|[^\n]+?)\s+to\s+({_QUOTED}|[^.\n]+)",
    re.IGNORECASE,
)
_NO_CHANGE = re.compile(
    r"nothing (?:was|has been|is) changed|no changes? (?:was |were |have been )?made|"
    r"(?:did not|didn't|haven't|have not) (?:change|make any changes?)|"
    r"left the workflow (?:as it was|unchanged)|the workflow (?:was|is) (?:not changed|unchanged)",
    re.IGNORECASE,
)
_NEGATION = re.compile(rf"(?:{alternation(NOT_A_CLAIM)})\s+$", re.I)
_STOP = re.compile(rf"\s+(?:{alternation(NAME_ENDS)})\b.*", re.IGNORECASE)
_LISTED = re.compile(rf"(?:\s*(?:,|and|, and)\s*(?:{_QUOTED}))+")


@dataclass
class Diff:
    added: list[str] = field(default_factory=list)  # names and keys of added jobs
    removed: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (old, new) names/keys
    workflow_renamed: str | None = None
    workflow_name: str | None = None
    changed: bool = False


def job_diff(before: Structure, after: Structure, changed: bool) -> Diff:
    diff = Diff(changed=changed, workflow_name=after.name)
    before_ids = {j.id: j for j in before.jobs.values() if j.id}
    after_ids = {j.id: j for j in after.jobs.values() if j.id}
    for job in after.jobs.values():
        old = before_ids.get(job.id) if job.id else before.jobs.get(job.key)
        if old is None:
            diff.added += [job.name, job.key]
        elif old.name != job.name or old.key != job.key:
            diff.renamed.append((f"{old.name} {old.key}", f"{job.name} {job.key}"))
    for job in before.jobs.values():
        if (job.id and job.id not in after_ids) or (not job.id and job.key not in after.jobs):
            diff.removed += [job.name, job.key]
    if before.name != after.name:
        diff.workflow_renamed = after.name or ""
    return diff


def _names(obj: str, quoted: bool) -> list[str]:
    if quoted:
        return [obj[1:-1]]
    obj = _STOP.sub("", obj)
    return [p for p in re.split(r",\s*|\s+and\s+", obj) if p.strip()]


def _matches(name: str, candidates: list[str]) -> bool:
    wanted = norm(name)
    return bool(wanted) and any(
        wanted in norm(c) or (norm(c) and norm(c) in wanted) for c in candidates
    )


def check_claims(reply: str, diff: Diff) -> tuple[list[str], int]:
    """(problems, number of claims checked)."""
    problems: list[str] = []
    claims = 0
    for match in _ADD_REMOVE.finditer(reply):
        if _NEGATION.search(reply[max(0, match.start() - 12) : match.start()]):
            continue
        verb, filler, obj = match.group(1).lower(), match.group(2).lower(), match.group(3)
        quoted = obj[0] in "\"“'"
        if any(word in filler or obj.lower().startswith(word) for word in NOT_STEPS):
            continue
        if not quoted and "step" not in filler and "job" not in filler and not obj[0].isupper():
            continue
        names = _names(obj, quoted)
        if quoted:  # "Added the steps "A" and "B"": the quoted names listed right after
            listed = _LISTED.match(reply, match.end())
            names += [q[1:-1] for q in re.findall(_QUOTED, listed.group(0))] if listed else []
        pool = diff.added if verb in ADDED_VERBS else diff.removed
        for name in names:
            if (
                diff.workflow_name
                and norm(name) == norm(diff.workflow_name)
                and not _matches(name, pool)
            ):
                continue  # 'Created "Referral intake"': the workflow, not a step
            claims += 1
            if not _matches(name, pool):
                problems.append(f"reply says {verb} {name!r}, but no such step was {verb}")
    for match in _RENAME.finditer(reply):
        old, new = (g[1:-1] if g[0] in "\"“'" else g for g in match.groups())
        claims += 1
        if "workflow" in old.lower():
            if diff.workflow_renamed is None or not _matches(new, [diff.workflow_renamed]):
                problems.append(f"reply says the workflow was renamed to {new!r}; it was not")
        elif not any(_matches(new, [after]) for _, after in diff.renamed):
            problems.append(f"reply says {old!r} was renamed to {new!r}; no such rename")
    if _NO_CHANGE.search(reply):
        claims += 1
        if diff.changed:
            problems.append("reply says nothing changed, but the workflow changed")
    return problems, claims


def reply_matches_diff(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    if not scenario.expect.reply_matches_diff or not outcome.turns:
        return None
    last = outcome.last
    before = WorkflowDocument.from_yaml(last.before_yaml).structure
    after = WorkflowDocument.from_yaml(last.after_yaml).structure
    diff = job_diff(
        before, after, changed=last.mutations > 0 or last.before_yaml != last.after_yaml
    )
    problems, claims = check_claims(last.reply, diff)
    if claims == 0:
        return GradeResult.ok("reply_matches_diff", "no checkable claims in the reply")
    return GradeResult.from_problems("reply_matches_diff", problems, claims)
