"""Syntax problems: tree-sitter ERROR/MISSING nodes, sharpened by a bracket-matching pass."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Literal

from tree_sitter import Node

from tools.jobcode.parse import RawProblem, Source, brief, iter_nodes

_OPENERS = {"(": ")", "[": "]", "{": "}", "${": "}"}
_CLOSERS = frozenset({")", "]", "}"})


def _bracket_of(node: Node) -> str | None:
    """The bracket a token node stands for, or None (missing nodes never count)."""
    if node.is_missing or (node.child_count != 0 and not node.is_error):
        return None
    kind = node.type
    if node.is_error:
        if node.child_count != 0:
            return None
        kind = node.text.decode("utf-8", "replace") if node.text is not None else ""
    if kind in _OPENERS or kind in _CLOSERS:
        return kind
    return None


@dataclass
class _BracketIssue:
    kind: Literal["unclosed", "stray", "mismatch"]
    node: Node  # the opener (unclosed) or the closer (stray, mismatch)
    openers: list[Node]  # openers left open by this issue (unclosed, mismatch)


def _scan_brackets(nodes: list[Node]) -> list[_BracketIssue]:
    stack: list[tuple[str, Node]] = []
    issues: list[_BracketIssue] = []
    for node in nodes:
        bracket = _bracket_of(node)
        if bracket is None:
            continue
        if bracket in _OPENERS:
            stack.append((bracket, node))
            continue
        if stack and _OPENERS[stack[-1][0]] == bracket:
            stack.pop()
            continue
        depth = next(
            (i for i in range(len(stack) - 1, -1, -1) if _OPENERS[stack[i][0]] == bracket),
            None,
        )
        if depth is None:
            issues.append(_BracketIssue("stray", node, []))
            continue
        left_open = [opener for _, opener in stack[depth + 1 :]]
        issues.append(_BracketIssue("mismatch", node, left_open))
        del stack[depth:]
    issues.extend(_BracketIssue("unclosed", opener, [opener]) for _, opener in stack)
    return issues


def _opener_for_missing(missing: Node) -> Node | None:
    parent = missing.parent
    if parent is None:
        return None
    found: Node | None = None
    for child in parent.children:
        if child.start_byte > missing.start_byte or child.id == missing.id:
            break
        bracket = _bracket_of(child)
        if bracket is not None and _OPENERS.get(bracket) == missing.type:
            found = child
    return found


def syntax_problems(source: Source) -> list[RawProblem]:
    raws: list[RawProblem] = []
    explained: set[int] = set()  # ids of opener nodes a MISSING closer accounts for

    # A full walk, not a query: `(MISSING)` patterns do not match every missing
    # node (e.g. a MISSING identifier), and erroneous bodies are the rare case.
    nodes = list(iter_nodes(source.root))
    errors = [node for node in nodes if node.is_error]
    for missing in (node for node in nodes if node.is_missing):
        token = missing.type
        if token in _CLOSERS:
            opener = _opener_for_missing(missing)
            if opener is not None:
                explained.add(opener.id)
                message = (
                    f"missing '{token}': add '{token}' here to close the "
                    f"'{opener.type}' opened at {source.where(opener)}"
                )
            else:
                message = f"missing '{token}': add '{token}' here"
        elif token == ";":
            message = (
                "missing ';' here: two expressions are next to each other; separate them "
                "with ';' or a line break, or join them with an operator"
            )
        elif missing.is_named:
            message = f"missing {token.replace('_', ' ')}: an expression is expected here"
        else:
            message = f"missing '{token}': add '{token}' here"
        raws.append(RawProblem("syntax", "missing_token", missing.start_byte, message))

    for issue in _scan_brackets(nodes):
        if issue.openers and all(o.id in explained for o in issue.openers):
            continue
        node = issue.node
        if issue.kind == "unclosed":
            closer = _OPENERS[node.type]
            raws.append(
                RawProblem(
                    "syntax",
                    "missing_token",
                    node.start_byte,
                    f"'{node.type}' is never closed: add the matching '{closer}' where it "
                    "should end",
                )
            )
        elif issue.kind == "stray":
            token = _bracket_of(node) or node.type
            partner = next(o for o, c in _OPENERS.items() if c == token and o != "${")
            raws.append(
                RawProblem(
                    "syntax",
                    "syntax_error",
                    node.start_byte,
                    f"unexpected '{token}': it has no matching '{partner}' "
                    f"(remove it, or add the missing '{partner}')",
                )
            )
        else:
            token = _bracket_of(node) or node.type
            inner = issue.openers[-1]
            expected = _OPENERS[inner.type]
            raws.append(
                RawProblem(
                    "syntax",
                    "syntax_error",
                    node.start_byte,
                    f"'{token}' does not match the '{inner.type}' opened at "
                    f"{source.where(inner)}: add '{expected}' before it to close that "
                    f"'{inner.type}', or remove this '{token}'",
                )
            )

    for error in errors:
        for child in error.children:
            if child.type in ("'", '"'):
                message = (
                    f"unterminated string: add the closing {child.type} before the end of the line"
                )
            elif child.type == "`":
                message = "unterminated template literal: add the closing `"
            else:
                continue
            raws.append(RawProblem("syntax", "syntax_error", child.start_byte, message))

    reported = sorted(raw.byte for raw in raws)
    for error in _outermost_errors(errors):
        index = bisect.bisect_left(reported, error.start_byte)
        if index < len(reported) and reported[index] <= error.end_byte:
            continue  # a more precise problem already points inside this region
        raws.append(_describe_error(source, error))
    return raws


def _outermost_errors(errors: list[Node]) -> list[Node]:
    result: list[Node] = []
    for node in errors:
        parent = node.parent
        while parent is not None and not parent.is_error:
            parent = parent.parent
        if parent is None:
            result.append(node)
    return result


def _describe_error(source: Source, error: Node) -> RawProblem:
    text = source.text(error)
    parent = error.parent
    if parent is not None and parent.type == "string":
        line, _ = source.position(parent.start_byte)
        return RawProblem(
            "syntax",
            "syntax_error",
            parent.start_byte,
            f"unterminated string: a quoted string cannot continue past the end of line "
            f"{line}; close it on the same line, or use a `template literal` for multi-line "
            "text",
        )
    if text.startswith("/*"):
        return RawProblem(
            "syntax",
            "syntax_error",
            error.start_byte,
            "unterminated block comment: add the closing */",
        )
    if not text.strip():
        at_end = error.start_byte >= len(source.data.rstrip())
        what = "unexpected end of code" if at_end else "code cannot be parsed here"
        return RawProblem("syntax", "syntax_error", error.start_byte, what)
    return RawProblem("syntax", "syntax_error", error.start_byte, f"unexpected '{brief(text)}'")


def elided_argument_problems(arguments: list[Node]) -> list[RawProblem]:
    """``get(1,,2)`` / ``get(,1)``: tree-sitter accepts them, JavaScript does not."""
    raws: list[RawProblem] = []
    for node in arguments:
        previous: Node | None = None
        for child in node.children:
            if (
                child.type == ","
                and previous is not None
                and previous.type in ("(", ",")
                and not previous.is_missing
            ):
                raws.append(
                    RawProblem(
                        "syntax",
                        "syntax_error",
                        child.start_byte,
                        "unexpected ',': an argument is missing before it (remove the extra "
                        "',' or put the argument in)",
                    )
                )
            if not child.is_extra:
                previous = child
    return raws
