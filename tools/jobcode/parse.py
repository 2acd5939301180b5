"""Parsing job code with tree-sitter: the public types and the parser plumbing.

OpenFn job code is JavaScript whose top level is a sequence of *operation*
calls. The tree-sitter parser is built lazily, once per thread (``Parser``
objects are not thread-safe). Everything here is deterministic and side-effect free.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from tree_sitter import Language, Node, Parser, Query, QueryCursor

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


def parser_tools() -> _ThreadTools:
    tools: _ThreadTools | None = getattr(_local, "tools", None)
    if tools is None:
        language = _get_language()
        tools = _ThreadTools(parser=Parser(language), query=Query(language, _QUERY_SOURCE))
        _local.tools = tools
    return tools


def encode(text: str) -> bytes:
    # surrogatepass: arbitrary Python strings (lone surrogates included) must
    # never make the checker raise.
    return text.encode("utf-8", "surrogatepass")


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


class Source:
    """A parsed body plus byte/character position helpers."""

    def __init__(self, body: str) -> None:
        self.data = encode(body)
        self.tree = parser_tools().parser.parse(self.data)
        self.root = self.tree.root_node
        starts = [0]
        index = self.data.find(b"\n")
        while index != -1:
            starts.append(index + 1)
            index = self.data.find(b"\n", index + 1)
        self.line_starts = starts

    def captures(self) -> dict[str, list[Node]]:
        captures = QueryCursor(parser_tools().query).captures(self.root)
        return {name: sorted(nodes, key=node_key) for name, nodes in captures.items()}

    def position(self, byte: int) -> tuple[int, int]:
        """1-based (line, character column) of a byte offset."""
        byte = max(0, min(byte, len(self.data)))
        row = bisect.bisect_right(self.line_starts, byte) - 1
        start = self.line_starts[row]
        return row + 1, len(decode(self.data[start:byte])) + 1

    def where(self, node: Node) -> str:
        line, column = self.position(node.start_byte)
        return f"line {line}, col {column}"

    def text(self, node: Node) -> str:
        return decode(self.data[node.start_byte : node.end_byte])


def node_key(node: Node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def iter_nodes(root: Node) -> Iterator[Node]:
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


def brief(text: str, limit: int = 40) -> str:
    first = text.strip().split("\n", 1)[0].rstrip("\r")
    if not first.isprintable():  # a NUL or a control character, quoted in a message: escaped
        first = "".join(c if c.isprintable() else repr(c)[1:-1] for c in first)
    if len(first) > limit:
        return first[: limit - 1] + "…"
    if "\n" in text.strip():
        return first + " …"
    return first


FUNCTION_TYPES = frozenset(
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
COMMENT_TYPES = frozenset({"comment", "html_comment", "hash_bang_line"})


@dataclass(frozen=True)
class RawProblem:
    """A problem before positions are turned into line/column."""

    kind: ProblemKind
    rule: str
    byte: int
    message: str
