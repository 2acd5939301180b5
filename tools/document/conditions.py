"""JavaScript edge conditions as OpenFn runs them.

``@openfn/runtime`` (1.9) compiles a ``js_expression`` edge as the body
``return <expression>`` of a function of ``(state, upstreamStepId)`` and calls it
when the source step ends, **also when that step failed**: a failed step records
``state.errors[<its id>]`` (errors accumulate and are never cleared, so a failure
handled earlier in the run is still there) and its edges are evaluated on that
state. The runtime's own ``on_job_success`` is
``!state?.errors?.[upstreamStepId]``; a branch that means "on success and X"
carries the same guard, :data:`SUCCESS_GUARD`, in front of X. A bare
``!state.errors`` would also block the branch after any earlier, handled failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tools.jobcode.parse import COMMENT_TYPES, Source
from tools.jobcode.syntax import syntax_problems

SUCCESS_GUARD = "!state.errors?.[upstreamStepId]"
"""True when the edge's source step did not fail (the runtime's own on_job_success)."""

_LOOKS_AT_ERRORS = re.compile(r"\bstate\s*(?:\?\.|\.)\s*errors\b|\bupstreamStepId\b|\$\.errors\b")
_GUARDED = re.compile(r"^" + re.escape(SUCCESS_GUARD) + r" && \((?P<check>.*)\)$", re.S)


def looks_at_errors(expression: str) -> bool:
    """Whether an expression already decides on failure itself (reads ``state.errors``)."""
    return bool(_LOOKS_AT_ERRORS.search(expression))


def on_success_and(check: str) -> str:
    """``check`` behind the success guard, so the branch never fires for a failed step.

    An expression that reads ``state.errors`` already says what it wants on failure
    and is kept as written.
    """
    if looks_at_errors(check):
        return check
    return f"{SUCCESS_GUARD} && ({check})"


def unguarded(expression: str) -> str | None:
    """The check inside an :func:`on_success_and` expression, or None if it has no guard."""
    match = _GUARDED.match(expression)
    return match.group("check") if match else None


@dataclass(frozen=True)
class ExpressionProblem:
    """Why a condition is not one JavaScript expression; 1-based line and column in it."""

    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.message} (line {self.line}, column {self.column})"


def expression_problem(expression: str) -> ExpressionProblem | None:
    """None when ``expression`` parses as one JavaScript expression that the runtime's
    ``return <expression>`` returns (a trailing ``;`` is allowed, as it is there).

    Statements, a second expression (``a; b``) and a line break before the
    expression (``return`` followed by a new line returns nothing) are problems.
    """
    if not expression.strip():
        return None
    source = Source(expression)
    if source.root.has_error:
        byte, message = _first_syntax_problem(source, expression)
        return _at(source, byte, message)
    statements = [c for c in source.root.named_children if c.type not in COMMENT_TYPES]
    if len(statements) != 1 or statements[0].type != "expression_statement":
        stray = statements[1] if len(statements) > 1 else statements[0] if statements else None
        return _at(source, stray.start_byte if stray else 0, _ONE)
    start = statements[0].start_byte
    if b"\n" in source.data[:start]:
        return _at(
            source,
            start,
            "the expression must start on the first line: OpenFn runs it as "
            "'return <expression>', and a line break after 'return' returns nothing",
        )
    return None


_ONE = "a condition is one JavaScript expression, not statements"


def _first_syntax_problem(source: Source, expression: str) -> tuple[int, str]:
    raws = sorted(syntax_problems(source), key=lambda raw: raw.byte)
    if raws and raws[0].byte > 0:
        return raws[0].byte, raws[0].message
    # Read as a statement, an unfinished expression ("a ===") is blamed as a whole on
    # its first character; read inside parentheses, the parser says what is missing
    # where. Problems at the added "(" itself say nothing about the text.
    wrapped = sorted(syntax_problems(Source("(" + expression + "\n)")), key=lambda r: r.byte)
    inside = [raw for raw in wrapped if 0 < raw.byte <= len(source.data) + 1]
    if inside:
        return inside[0].byte - 1, inside[0].message
    return (0, raws[0].message) if raws else (0, _ONE)


def _at(source: Source, byte: int, message: str) -> ExpressionProblem:
    line, column = source.position(byte)
    return ExpressionProblem(line, column, message)
