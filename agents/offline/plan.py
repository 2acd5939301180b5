"""What a parser produces: tool calls to propose, or a reply that changes nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    name: str
    input: dict[str, Any]


@dataclass
class Plan:
    """Tool calls, run in order. ``intro`` is said before them. ``rest`` is the end of
    the user's text the parser did not use (e.g. "and then ..." after a new name): the
    planner must understand it too, or change nothing."""

    calls: list[Call]
    intro: str = ""
    rest: str = ""

    def __add__(self, other: Plan) -> Plan:
        intro = " ".join(part for part in (self.intro, other.intro) if part)
        return Plan([*self.calls, *other.calls], intro)


@dataclass
class Reply:
    """A plain answer: a question answered, a clarifying question, or a refusal."""

    text: str
    asks: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


Outcome = Plan | Reply


def call(tool: str, /, **args: Any) -> Call:
    return Call(tool, {k: v for k, v in args.items() if v is not None})


def edge_args(
    source: str,
    target: str,
    condition_type: str | None = None,
    expression: str | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"source": source, "target": target}
    if condition_type is not None:
        spec["condition_type"] = condition_type
    if expression is not None:
        spec["condition_expression"] = expression
    if label:
        spec["condition_label"] = label
    return spec
