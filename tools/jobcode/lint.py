"""The OpenFn job-code rules, and ``check_job_code`` which runs the syntax checks then them.

Only operation calls at the top level; no import, require, export or top-level await;
and (``operations``) only operations the step's adaptor has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tree_sitter import Node

from tools.jobcode.arity import arity_problems, same_major
from tools.jobcode.operations import (
    NOT_OPERATION_NAMESPACES,
    UNKNOWN_OPERATION,
    operation_problems,
)
from tools.jobcode.parse import (
    COMMENT_TYPES,
    FUNCTION_TYPES,
    CodeProblem,
    RawProblem,
    Source,
    brief,
)
from tools.jobcode.syntax import elided_argument_problems, syntax_problems

if TYPE_CHECKING:
    from tools.catalogue.adaptors import Adaptor

_WRAP_HINT = "e.g. fn(state => { ...; return state; })"


def check_job_code(
    body: str, adaptor: Adaptor | None = None, *, version: str | None = None
) -> list[CodeProblem]:
    """Syntax-check and lint ``body``; an empty list means it is fine.

    Syntax problems come from tree-sitter ERROR/MISSING nodes, sharpened by a
    bracket-matching pass over the parsed tokens; lint problems are the OpenFn
    job-code rules (only operation calls at the top level; no import, require,
    export or top-level await) and, given the step's ``adaptor``, that every
    operation it calls exists there (``unknown_operation``, with a did-you-mean) with the
    arguments its published parameter list takes (``wrong_arity``,
    ``wrong_argument_kind``: :mod:`tools.jobcode.arity`).
    Without an adaptor (or for one the catalogue does not know) operations are not
    checked. Arguments are checked only when the step's pinned ``version`` is
    ``latest``, not given, or of the facts' major version: another major version
    publishes other signatures (language-http 6's ``post(path, params, callback)``).
    Sorted by (line, column).
    """
    source = Source(body)
    captures = source.captures()
    raws: list[RawProblem] = []
    if source.root.has_error:
        raws.extend(syntax_problems(source))
    raws.extend(elided_argument_problems(captures.get("arguments", [])))
    raws.extend(lint_problems(source, captures))
    if adaptor is not None and not source.root.has_error:
        raws.extend(operation_problems(source, adaptor))
        if same_major(version, adaptor.version):
            raws.extend(arity_problems(source, adaptor))

    problems: set[CodeProblem] = set()
    for raw in raws:
        line, column = source.position(raw.byte)
        problems.add(CodeProblem(raw.kind, raw.rule, line, column, raw.message))
    return sorted(problems, key=lambda p: (p.line, p.column, p.kind, p.rule, p.message))


def _enclosing_function(node: Node) -> Node | None:
    parent = node.parent
    while parent is not None:
        if parent.type in FUNCTION_TYPES:
            return parent
        parent = parent.parent
    return None


def _is_async(function: Node) -> bool:
    return any(child.type == "async" for child in function.children)


def _await_problems(source: Source, awaits: list[Node]) -> list[tuple[Node, RawProblem]]:
    raws: list[tuple[Node, RawProblem]] = []
    for node in awaits:
        function = _enclosing_function(node)
        if function is None:
            raws.append(
                (
                    node,
                    RawProblem(
                        "lint",
                        "no_top_level_await",
                        node.start_byte,
                        "top-level `await` is not allowed: the runtime runs each operation in "
                        "turn, so call the operation directly (e.g. get(...)); to await inside "
                        "your own logic use an async callback, e.g. "
                        "fn(async state => { await ...; return state; })",
                    ),
                )
            )
        elif not _is_async(function):
            raws.append(
                (
                    node,
                    RawProblem(
                        "syntax",
                        "syntax_error",
                        node.start_byte,
                        "`await` is only valid inside an async function: mark the enclosing "
                        "function async, e.g. fn(async state => { ... })",
                    ),
                )
            )
    return raws


def lint_problems(source: Source, captures: dict[str, list[Node]]) -> list[RawProblem]:
    raws: list[RawProblem] = []
    flagged_statements: set[int] = set()

    def top_statement(node: Node) -> Node | None:
        current: Node | None = node
        while current is not None and current.parent is not None:
            if current.parent.id == source.root.id:
                return current
            current = current.parent
        return None

    def flag(node: Node, raw: RawProblem) -> None:
        raws.append(raw)
        statement = top_statement(node)
        if statement is not None:
            flagged_statements.add(statement.id)

    for node, raw in _await_problems(source, captures.get("await", [])):
        flag(node, raw)

    for callee in captures.get("callee", []):
        call = callee.parent
        if call is None:
            continue
        if callee.type == "import":
            flag(
                call,
                RawProblem(
                    "lint",
                    "no_import",
                    call.start_byte,
                    "dynamic `import()` is not allowed in job code: adaptor operations "
                    "(get, post, fn, each, ...) are already in scope; remove it",
                ),
            )
        elif source.text(callee) == "require":
            flag(
                call,
                RawProblem(
                    "lint",
                    "no_require",
                    call.start_byte,
                    "`require` is not available in job code: adaptor operations and helpers "
                    "are already in scope; remove the require and call them directly",
                ),
            )

    if source.root.is_error:
        return raws

    for statement in source.root.named_children:
        kind = statement.type
        if kind == "import_statement":
            flag(
                statement,
                RawProblem(
                    "lint",
                    "no_import",
                    statement.start_byte,
                    "`import` is not allowed in job code: adaptor operations (get, post, fn, "
                    "each, ...) are already in scope; remove this import",
                ),
            )
        elif kind == "export_statement":
            flag(
                statement,
                RawProblem(
                    "lint",
                    "no_export",
                    statement.start_byte,
                    "`export` is not allowed in job code: the runtime runs the top-level "
                    "operation calls; remove the `export` and keep only the operation call",
                ),
            )
        elif kind == "expression_statement" and _is_module_exports(source, statement):
            flag(
                statement,
                RawProblem(
                    "lint",
                    "no_export",
                    statement.start_byte,
                    "assigning to `module.exports`/`exports` is not allowed in job code: the "
                    "runtime runs the top-level operation calls; remove the assignment",
                ),
            )

    for statement in source.root.named_children:
        if (
            statement.id in flagged_statements
            or statement.is_error
            or statement.has_error
            or statement.type in COMMENT_TYPES
            or statement.type == "empty_statement"
        ):
            continue
        message = _not_operation_message(source, statement)
        if message is not None:
            raws.append(
                RawProblem("lint", "top_level_not_operation", statement.start_byte, message)
            )
    return raws


def _is_module_exports(source: Source, statement: Node) -> bool:
    expression = _unwrap(statement.named_children[0]) if statement.named_child_count else None
    if expression is None or expression.type != "assignment_expression":
        return False
    left = expression.child_by_field_name("left")
    if left is None:
        return False
    text = source.text(left).replace(" ", "")
    return text == "exports" or text.startswith(("module.exports", "exports."))


def _unwrap(node: Node) -> Node:
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def operation_name(source: Source, node: Node) -> str | None:
    """The operation a top-level expression calls (``get``, ``http.get``), or None.

    Accepts ``op(...)``, ``ns.op(...)`` and member calls chained on those
    (``get(...).then(...)``).
    """
    node = _unwrap(node)
    if node.type != "call_expression":
        return None
    function = node.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "identifier":
        name = source.text(function)
        return None if name == "require" else name
    if function.type != "member_expression":
        return None
    obj = function.child_by_field_name("object")
    prop = function.child_by_field_name("property")
    if obj is None or prop is None:
        return None
    obj = _unwrap(obj)
    if obj.type == "call_expression":
        return operation_name(source, obj)
    if obj.type == "identifier" and prop.type == "property_identifier":
        namespace = source.text(obj)
        if namespace in NOT_OPERATION_NAMESPACES:
            return None
        return f"{namespace}.{source.text(prop)}"
    return None


_STATEMENT_WORDS = {
    "if_statement": "if",
    "for_statement": "for",
    "for_in_statement": "for",
    "while_statement": "while",
    "do_statement": "do",
    "try_statement": "try",
    "switch_statement": "switch",
    "return_statement": "return",
    "throw_statement": "throw",
    "break_statement": "break",
    "continue_statement": "continue",
    "labeled_statement": "labelled",
    "with_statement": "with",
    "debugger_statement": "debugger",
}


def _not_operation_message(source: Source, statement: Node) -> str | None:
    kind = statement.type
    prefix = "only operation calls (get(...), fn(...), each(...), ...) may appear at the top level"
    if kind == "expression_statement":
        expression = statement.named_children[0] if statement.named_child_count else None
        if expression is None or operation_name(source, expression) is not None:
            return None
        expression = _unwrap(expression)
        snippet = brief(source.text(expression))
        if expression.type == "call_expression":
            return (
                f"`{snippet}` is not an operation call: {prefix}; move this call inside an "
                f"operation callback, {_WRAP_HINT}"
            )
        if expression.type in ("assignment_expression", "augmented_assignment_expression"):
            return (
                f"top-level assignment `{snippet}` is not an operation: {prefix}; to change "
                f"state, do it inside an operation callback, {_WRAP_HINT}"
            )
        return (
            f"top-level expression `{snippet}` is not an operation call: {prefix}; remove it "
            f"or move it inside an operation callback, {_WRAP_HINT}"
        )
    if kind in ("lexical_declaration", "variable_declaration"):
        keyword = statement.children[0].type if statement.child_count else "var"
        names = [
            source.text(name)
            for declarator in statement.named_children
            if declarator.type == "variable_declarator"
            and (name := declarator.child_by_field_name("name")) is not None
        ]
        what = f"`{keyword} {', '.join(names)}`" if names else f"`{keyword}` declaration"
        return (
            f"top-level {what} is not an operation: {prefix}; move the declaration inside "
            f"the operation callback that uses it, e.g. fn(state => {{ {keyword} ... ; "
            "return state; })"
        )
    if kind in (
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
    ):
        name_node = statement.child_by_field_name("name")
        declared = source.text(name_node) if name_node is not None else ""
        what = "class" if kind == "class_declaration" else "function"
        return (
            f"top-level {what} declaration `{declared}` is not an operation: {prefix}; define it "
            f"inside the operation callback that uses it, {_WRAP_HINT}"
        )
    if kind in _STATEMENT_WORDS:
        return (
            f"top-level `{_STATEMENT_WORDS[kind]}` statement is not an operation: {prefix}; "
            f"move this logic inside an operation callback, {_WRAP_HINT}"
        )
    return (
        f"top-level `{brief(source.text(statement))}` is not an operation: {prefix}; "
        f"move it inside an operation callback, {_WRAP_HINT}"
    )


def problems_error_code(problems: Sequence[CodeProblem]) -> str:
    """The stable error code for a body refused with ``problems``: ``unknown_operation``
    when calls to functions the adaptor lacks are all that is wrong (the fix is another
    name), else ``invalid_job_code``."""
    if problems and all(p.rule == UNKNOWN_OPERATION for p in problems):
        return UNKNOWN_OPERATION
    return "invalid_job_code"


def format_problems(problems: Sequence[CodeProblem], *, limit: int = 30) -> str:
    """Compact text, one problem per line, e.g.
    ``line 3, col 5: syntax error: unexpected ')'`` or
    ``line 1, col 1: rule no_import: `import` is not allowed ...``.

    At most ``limit`` problems are listed, followed by a count of the rest.
    Returns ``""`` for no problems.
    """
    lines = []
    for problem in problems[: max(limit, 0)]:
        label = "syntax error" if problem.kind == "syntax" else f"rule {problem.rule}"
        lines.append(f"line {problem.line}, col {problem.column}: {label}: {problem.message}")
    rest = len(problems) - len(lines)
    if rest > 0:
        lines.append(f"... and {rest} more problem{'s' if rest != 1 else ''}")
    return "\n".join(lines)
