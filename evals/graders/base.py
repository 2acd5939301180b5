"""What every grader shares: the result type and how scenarios name things.

A grader is ``(scenario, outcome) -> GradeResult | None``; ``None`` means it
does not apply to the scenario (nothing expected of that kind). A skipped
grader (the LLM judge without a key) returns ``skipped=True`` and never
counts as passed or failed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from evals.execute import RunOutcome
from evals.scenario import Scenario
from tools.document.structure import Edge, Structure


@dataclass(frozen=True)
class GradeResult:
    name: str
    score: float
    passed: bool
    comment: str = ""
    skipped: bool = False

    @classmethod
    def ok(cls, name: str, comment: str = "") -> GradeResult:
        return cls(name, 1.0, True, comment)

    @classmethod
    def fail(cls, name: str, comment: str, score: float = 0.0) -> GradeResult:
        return cls(name, score, False, comment)

    @classmethod
    def skip(cls, name: str, comment: str) -> GradeResult:
        return cls(name, 0.0, False, comment, skipped=True)

    @classmethod
    def from_problems(cls, name: str, problems: list[str], checks: int) -> GradeResult:
        """Pass when there are no problems; score is the share of checks that held."""
        if not problems:
            return cls.ok(name, f"{checks} check{'s' if checks != 1 else ''} held")
        score = max(0.0, 1 - len(problems) / max(checks, 1))
        return cls.fail(name, "; ".join(problems), round(score, 3))

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = "skipped" if self.skipped else ("passed" if self.passed else "failed")
        return data


Grader = Callable[[Scenario, RunOutcome], "GradeResult | None"]


def norm(text: str) -> str:
    """Lower-case letters and digits only: 'Send SMS' == 'send-sms' == 'send sms'."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def resolve_job(structure: Structure, ref: str) -> str | None:
    """The key of the job ``ref`` names: key, display name, or ``~substring``."""
    if ref.startswith("~"):
        needle = norm(ref[1:])
        hits = [
            key
            for key, job in structure.jobs.items()
            if needle in norm(key) or needle in norm(job.name)
        ]
        return hits[0] if len(hits) == 1 else (sorted(hits)[0] if hits else None)
    if ref in structure.jobs:
        return ref
    for key, job in structure.jobs.items():
        if job.name.lower() == ref.lower():
            return key
    return None


def resolve_node(structure: Structure, ref: str) -> str | None:
    """A trigger key (or ``trigger``: the only trigger) or a job ref."""
    if ref == "trigger":
        return next(iter(structure.triggers), None)
    if ref in structure.triggers:
        return ref
    return resolve_job(structure, ref)


def find_edge(structure: Structure, source_ref: str, target_ref: str) -> Edge | None:
    source, target = resolve_node(structure, source_ref), resolve_job(structure, target_ref)
    if source is None or target is None:
        return None
    return structure.find_edge(source, target)
