"""Pure functions over OpenFn job code (JavaScript source strings).

OpenFn job code is JavaScript whose top level is a sequence of *operation*
calls (``get(...)``, ``fn(state => ...)``, ``each('$.items[*]', post(...))``).
This module

- syntax-checks a body with tree-sitter and lints it for the OpenFn rules
  (:func:`check_job_code`, :func:`format_problems`);
- applies the ``edit_job_code`` tool's edits to a body
  (:func:`apply_code_edits`);
- answers small questions about a body (:func:`has_code`,
  :func:`body_line_count`, :func:`top_level_operations`).

Everything here is deterministic and side-effect free. The tree-sitter parser
is built lazily, once per thread (``Parser`` objects are not thread-safe).
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from tools.errors import CodeEditError

__all__ = [
    "STANDARD_EMPTY_BODY",
    "CodeEdit",
    "CodeProblem",
    "apply_code_edits",
    "body_line_count",
    "check_job_code",
    "format_problems",
    "has_code",
    "top_level_operations",
]

STANDARD_EMPTY_BODY = "// Add operations here"

ProblemKind = Literal["syntax", "lint"]

# --------------------------------------------------------------------------
# Public types
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CodeProblem:
    """One problem found in a job body.

    ``line`` and ``column`` are 1-based; ``column`` counts characters (not
    bytes) from the start of the line.
    """

    kind: ProblemKind
    rule: str
    line: int
    column: int
    message: str


@dataclass(frozen=True)
class CodeEdit:
    """Mirror of one ``edit_job_code`` input item."""

    action: Literal["replace", "rewrite"]
    new_code: str
    old_code: str | None = None


# --------------------------------------------------------------------------
# Parser plumbing
# --------------------------------------------------------------------------

_language_lock = threading.Lock()
_language: Language | None = None
_local = threading.local()

_QUERY_SOURCE = """
(comment) @comment
(html_comment) @comment
(await_expression) @await
(call_expression function: [(identifier) (import)] @callee) @call
(arguments) @arguments
"""


def _get_language() -> Language:
    global _language
    if _language is None:
        with _language_lock:
            if _language is None:
                import tree_sitter_javascript

                _language = Language(tree_sitter_javascript.language())
    return _language


@dataclass
class _ThreadTools:
    parser: Parser
    query: Query


def _tools() -> _ThreadTools:
    tools: _ThreadTools | None = getattr(_local, "tools", None)
    if tools is None:
        language = _get_language()
        tools = _ThreadTools(parser=Parser(language), query=Query(language, _QUERY_SOURCE))
        _local.tools = tools
    return tools


def _encode(text: str) -> bytes:
    # surrogatepass: arbitrary Python strings (lone surrogates included) must
    # never make the checker raise.
    return text.encode("utf-8", "surrogatepass")


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


class _Source:
    """A parsed body plus byte/character position helpers."""

    def __init__(self, body: str) -> None:
        self.data = _encode(body)
        self.tree = _tools().parser.parse(self.data)
        self.root = self.tree.root_node
        starts = [0]
        index = self.data.find(b"\n")
        while index != -1:
            starts.append(index + 1)
            index = self.data.find(b"\n", index + 1)
        self.line_starts = starts

    def captures(self) -> dict[str, list[Node]]:
        captures = QueryCursor(_tools().query).captures(self.root)
        return {name: sorted(nodes, key=_node_key) for name, nodes in captures.items()}

    def position(self, byte: int) -> tuple[int, int]:
        """1-based (line, character column) of a byte offset."""
        byte = max(0, min(byte, len(self.data)))
        row = bisect.bisect_right(self.line_starts, byte) - 1
        start = self.line_starts[row]
        return row + 1, len(_decode(self.data[start:byte])) + 1

    def where(self, node: Node) -> str:
        line, column = self.position(node.start_byte)
        return f"line {line}, col {column}"

    def text(self, node: Node) -> str:
        return _decode(self.data[node.start_byte : node.end_byte])


def _node_key(node: Node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def _iter_nodes(root: Node) -> Iterator[Node]:
    """All nodes under ``root`` (inclusive), in document order."""
    cursor = root.walk()
    while True:
        node = cursor.node
        if node is not None:
            yield node
        if cursor.goto_first_child():
            continue
        if cursor.goto_next_sibling():
            continue
        while True:
            if not cursor.goto_parent():
                return
            if cursor.goto_next_sibling():
                break


def _snippet(text: str, limit: int = 40) -> str:
    first = text.strip().split("\n", 1)[0].rstrip("\r")
    if len(first) > limit:
        return first[: limit - 1] + "…"
    if "\n" in text.strip():
        return first + " …"
    return first


# --------------------------------------------------------------------------
# check_job_code
# --------------------------------------------------------------------------

_OPENERS = {"(": ")", "[": "]", "{": "}", "${": "}"}
_CLOSERS = frozenset({")", "]", "}"})
_FUNCTION_TYPES = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "method_definition",
        "generator_function",
        "generator_function_declaration",
    }
)
_COMMENT_TYPES = frozenset({"comment", "html_comment", "hash_bang_line"})
# Identifiers whose methods are plain JavaScript, never OpenFn operations.
_NOT_OPERATION_NAMESPACES = frozenset(
    {
        "$",
        "Array",
        "Boolean",
        "Date",
        "JSON",
        "Math",
        "Number",
        "Object",
        "Promise",
        "Reflect",
        "String",
        "Symbol",
        "console",
        "globalThis",
        "process",
        "state",
        "util",
        "window",
    }
)
_WRAP_HINT = "e.g. fn(state => { ...; return state; })"


@dataclass(frozen=True)
class _Raw:
    """A problem before positions are turned into line/column."""

    kind: ProblemKind
    rule: str
    byte: int
    message: str


def check_job_code(body: str) -> list[CodeProblem]:
    """Syntax-check and lint ``body``; an empty list means it is fine.

    Syntax problems come from tree-sitter ERROR/MISSING nodes, sharpened by a
    bracket-matching pass over the parsed tokens; lint problems are the OpenFn
    job-code rules (only operation calls at the top level; no import, require,
    export or top-level await). Sorted by (line, column).
    """
    source = _Source(body)
    captures = source.captures()
    raws: list[_Raw] = []
    if source.root.has_error:
        raws.extend(_syntax_problems(source))
    raws.extend(_elided_argument_problems(captures.get("arguments", [])))
    raws.extend(_lint_problems(source, captures))

    problems: set[CodeProblem] = set()
    for raw in raws:
        line, column = source.position(raw.byte)
        problems.add(CodeProblem(raw.kind, raw.rule, line, column, raw.message))
    return sorted(problems, key=lambda p: (p.line, p.column, p.kind, p.rule, p.message))


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


def _syntax_problems(source: _Source) -> list[_Raw]:
    raws: list[_Raw] = []
    explained: set[int] = set()  # ids of opener nodes a MISSING closer accounts for

    # A full walk, not a query: `(MISSING)` patterns do not match every missing
    # node (e.g. a MISSING identifier), and erroneous bodies are the rare case.
    nodes = list(_iter_nodes(source.root))
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
        raws.append(_Raw("syntax", "missing_token", missing.start_byte, message))

    for issue in _scan_brackets(nodes):
        if issue.openers and all(o.id in explained for o in issue.openers):
            continue
        node = issue.node
        if issue.kind == "unclosed":
            closer = _OPENERS[node.type]
            raws.append(
                _Raw(
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
                _Raw(
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
                _Raw(
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
            raws.append(_Raw("syntax", "syntax_error", child.start_byte, message))

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


def _describe_error(source: _Source, error: Node) -> _Raw:
    text = source.text(error)
    parent = error.parent
    if parent is not None and parent.type == "string":
        line, _ = source.position(parent.start_byte)
        return _Raw(
            "syntax",
            "syntax_error",
            parent.start_byte,
            f"unterminated string: a quoted string cannot continue past the end of line "
            f"{line}; close it on the same line, or use a `template literal` for multi-line "
            "text",
        )
    if text.startswith("/*"):
        return _Raw(
            "syntax",
            "syntax_error",
            error.start_byte,
            "unterminated block comment: add the closing */",
        )
    if not text.strip():
        at_end = error.start_byte >= len(source.data.rstrip())
        what = "unexpected end of code" if at_end else "code cannot be parsed here"
        return _Raw("syntax", "syntax_error", error.start_byte, what)
    return _Raw("syntax", "syntax_error", error.start_byte, f"unexpected '{_snippet(text)}'")


def _enclosing_function(node: Node) -> Node | None:
    parent = node.parent
    while parent is not None:
        if parent.type in _FUNCTION_TYPES:
            return parent
        parent = parent.parent
    return None


def _is_async(function: Node) -> bool:
    return any(child.type == "async" for child in function.children)


def _elided_argument_problems(arguments: list[Node]) -> list[_Raw]:
    """``get(1,,2)`` / ``get(,1)``: tree-sitter accepts them, JavaScript does not."""
    raws: list[_Raw] = []
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
                    _Raw(
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


def _await_problems(source: _Source, awaits: list[Node]) -> list[tuple[Node, _Raw]]:
    raws: list[tuple[Node, _Raw]] = []
    for node in awaits:
        function = _enclosing_function(node)
        if function is None:
            raws.append(
                (
                    node,
                    _Raw(
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
                    _Raw(
                        "syntax",
                        "syntax_error",
                        node.start_byte,
                        "`await` is only valid inside an async function: mark the enclosing "
                        "function async, e.g. fn(async state => { ... })",
                    ),
                )
            )
    return raws


def _lint_problems(source: _Source, captures: dict[str, list[Node]]) -> list[_Raw]:
    raws: list[_Raw] = []
    flagged_statements: set[int] = set()

    def top_statement(node: Node) -> Node | None:
        current: Node | None = node
        while current is not None and current.parent is not None:
            if current.parent.id == source.root.id:
                return current
            current = current.parent
        return None

    def flag(node: Node, raw: _Raw) -> None:
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
                _Raw(
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
                _Raw(
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
                _Raw(
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
                _Raw(
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
                _Raw(
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
            or statement.type in _COMMENT_TYPES
            or statement.type == "empty_statement"
        ):
            continue
        message = _not_operation_message(source, statement)
        if message is not None:
            raws.append(_Raw("lint", "top_level_not_operation", statement.start_byte, message))
    return raws


def _is_module_exports(source: _Source, statement: Node) -> bool:
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


def _operation_name(source: _Source, node: Node) -> str | None:
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
        return _operation_name(source, obj)
    if obj.type == "identifier" and prop.type == "property_identifier":
        namespace = source.text(obj)
        if namespace in _NOT_OPERATION_NAMESPACES:
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


def _not_operation_message(source: _Source, statement: Node) -> str | None:
    kind = statement.type
    prefix = "only operation calls (get(...), fn(...), each(...), ...) may appear at the top level"
    if kind == "expression_statement":
        expression = statement.named_children[0] if statement.named_child_count else None
        if expression is None or _operation_name(source, expression) is not None:
            return None
        expression = _unwrap(expression)
        snippet = _snippet(source.text(expression))
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
        f"top-level `{_snippet(source.text(statement))}` is not an operation: {prefix}; "
        f"move it inside an operation callback, {_WRAP_HINT}"
    )


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


# --------------------------------------------------------------------------
# apply_code_edits
# --------------------------------------------------------------------------

_NOT_CHANGED = "the code was not changed"


def apply_code_edits(body: str, edits: Sequence[CodeEdit]) -> str:
    """Apply ``edits`` in order to the current body and return the new body.

    ``rewrite`` replaces the whole body with ``new_code``; ``replace`` swaps
    ``old_code`` for ``new_code`` and requires ``old_code`` to occur exactly
    once in the text as it stands after the earlier edits. All or nothing: on
    any error a :class:`CodeEditError` is raised and nothing is applied. The
    body's trailing-newline convention is kept.
    """
    if not edits:
        raise CodeEditError(f"no edits were given; {_NOT_CHANGED}", code="no_edits")
    total = len(edits)
    current = body
    for index, edit in enumerate(edits, start=1):
        where = f"edit {index} of {total}" if total > 1 else "the edit"
        if edit.action == "rewrite":
            current = edit.new_code
            continue
        if edit.action != "replace":
            raise CodeEditError(
                f"{where}: unknown action {edit.action!r} (use 'replace' or 'rewrite'); "
                f"{_NOT_CHANGED}",
                code="invalid_action",
                edit_index=index,
            )
        old = edit.old_code
        if not old:
            raise CodeEditError(
                f"{where}: action 'replace' needs a non-empty old_code (the exact text to "
                f"replace); use action 'rewrite' to replace the whole body; {_NOT_CHANGED}",
                code="old_code_required",
                edit_index=index,
            )
        positions = _occurrences(current, old)
        if not positions:
            raise CodeEditError(
                f"{where}: old_code was not found in the current code"
                f"{_not_found_hint(current, old)}; copy old_code exactly from the current "
                f"code (including whitespace); {_NOT_CHANGED}",
                code="old_code_not_found",
                edit_index=index,
            )
        if len(positions) > 1:
            lines = ", ".join(str(current.count("\n", 0, p) + 1) for p in positions[:10])
            raise CodeEditError(
                f"{where}: old_code occurs {len(positions)} times in the current code "
                f"(starting on lines {lines}); include more surrounding code so it matches "
                f"exactly once; {_NOT_CHANGED}",
                code="old_code_ambiguous",
                edit_index=index,
                occurrences=len(positions),
            )
        start = positions[0]
        current = current[:start] + edit.new_code + current[start + len(old) :]
    return _keep_trailing_newline(body, current)


def _occurrences(text: str, needle: str) -> list[int]:
    """Start offsets of ``needle`` in ``text``, overlapping matches included."""
    positions = []
    start = text.find(needle)
    while start != -1:
        positions.append(start)
        start = text.find(needle, start + 1)
    return positions


def _not_found_hint(text: str, old: str) -> str:
    stripped = old.strip()
    if stripped and stripped != old and len(_occurrences(text, stripped)) == 1:
        return " (it does occur once without its leading/trailing whitespace)"
    old_lines = [line.strip() for line in old.splitlines() if line.strip()]
    if not old_lines:
        return ""
    text_lines = [line.strip() for line in text.splitlines()]
    first = old_lines[0]
    matches = [i + 1 for i, line in enumerate(text_lines) if line == first]
    if not matches:
        return ""
    numbers = ", ".join(str(n) for n in matches[:5])
    if len(old_lines) == 1:
        return f" (a line with the same text but different indentation is at line {numbers})"
    return (
        f" (its first line matches line {numbers} of the current code, but the following "
        "lines differ)"
    )


def _keep_trailing_newline(original: str, result: str) -> str:
    if result == "" or original == "":
        return result
    if original.endswith("\n"):
        if not result.endswith("\n"):
            result += "\r\n" if original.endswith("\r\n") else "\n"
        return result
    while result.endswith("\n"):
        result = result[:-2] if result.endswith("\r\n") else result[:-1]
    return result


# --------------------------------------------------------------------------
# Small questions about a body
# --------------------------------------------------------------------------


def _code_lines(body: str) -> list[str]:
    """The body's lines with comments blanked out (per the parse tree)."""
    source = _Source(body)
    data = bytearray(source.data)
    for comment in source.captures().get("comment", []):
        for i in range(comment.start_byte, comment.end_byte):
            if data[i] not in (0x0A, 0x0D):
                data[i] = 0x20
    return _decode(bytes(data)).split("\n")


def body_line_count(body: str) -> int:
    """Lines holding code: neither blank nor comment-only."""
    if not body or not body.strip():
        return 0
    return sum(1 for line in _code_lines(body) if line.strip())


def has_code(body: str | None) -> bool:
    """False for None, empty, whitespace-only or comment-only bodies."""
    if body is None or not body.strip():
        return False
    return any(line.strip() for line in _code_lines(body))


def top_level_operations(body: str) -> list[str]:
    """Names of the operations called at the top level, in order.

    ``get(...).then(...)`` counts as ``get``; namespaced operations keep their
    namespace (``collections.get``). Statements that are not operation calls
    are skipped.
    """
    source = _Source(body)
    names: list[str] = []
    for statement in source.root.named_children:
        if statement.type != "expression_statement" or not statement.named_child_count:
            continue
        name = _operation_name(source, statement.named_children[0])
        if name is not None:
            names.append(name)
    return names
