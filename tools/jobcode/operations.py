"""Whether the operations a body calls exist in its step's adaptor.

Checked: every call evaluated when the job is loaded, i.e. outside any function
body: the top-level operations and the operations passed to them
(``each('$.items[*]', post(...))``), flat (``get``) or namespaced
(``http.post``, ``collections.set``). Calls inside callbacks are not checked:
there local names and plain JavaScript are in scope, which tree-sitter cannot
tell apart without scope analysis.

What exists comes from the adaptor facts (:meth:`Adaptor.has_call`): the
package's exports, language-common's re-exports (``fn``, ``each``, ...)
included only where the facts list them, and its own namespaces.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from tools.catalogue.adaptors import Adaptor
from tools.jobcode.parse import FUNCTION_TYPES, RawProblem, Source

UNKNOWN_OPERATION = "unknown_operation"

# Objects whose methods are plain JavaScript (or the job's own data), never adaptor
# operations; ``util`` helpers are namespaced utilities, not operations either.
NOT_OPERATION_NAMESPACES = frozenset(
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
# JavaScript's global functions: callable anywhere, never adaptor operations.
_GLOBAL_FUNCTIONS = frozenset(
    {
        "Array",
        "BigInt",
        "Boolean",
        "Date",
        "Error",
        "Number",
        "Object",
        "RegExp",
        "String",
        "Symbol",
        "atob",
        "btoa",
        "decodeURI",
        "decodeURIComponent",
        "encodeURI",
        "encodeURIComponent",
        "isFinite",
        "isNaN",
        "parseFloat",
        "parseInt",
        "structuredClone",
    }
)
_LISTED = 12


def load_time_calls(node: Node) -> Iterator[Node]:
    """Call expressions under ``node`` that are not inside a function body."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in FUNCTION_TYPES:
            continue
        if current.type == "call_expression":
            yield current
        stack.extend(reversed(current.children))


def called_name(source: Source, call: Node) -> str | None:
    """``get`` for ``get(...)``, ``http.post`` for ``http.post(...)``; None for anything
    that is not an adaptor call (globals, ``JSON.stringify``, ``get(...).then``)."""
    function = call.child_by_field_name("function")
    while function is not None and function.type == "parenthesized_expression":
        function = function.named_children[0] if function.named_child_count else None
    if function is None:
        return None
    if function.type == "identifier":
        name = source.text(function)
        return None if name in _GLOBAL_FUNCTIONS or name == "require" else name
    if function.type != "member_expression":
        return None
    obj = function.child_by_field_name("object")
    prop = function.child_by_field_name("property")
    if obj is None or prop is None or obj.type != "identifier":
        return None
    if prop.type != "property_identifier" or source.text(obj) in NOT_OPERATION_NAMESPACES:
        return None
    return f"{source.text(obj)}.{source.text(prop)}"


def unknown_operation_message(adaptor: Adaptor, name: str) -> str:
    """Why ``name`` is refused, with a did-you-mean or what the adaptor does offer."""
    where = f"{adaptor.name}@{adaptor.version}"
    suggestions = adaptor.suggest_call(name)
    if suggestions:
        hint = "did you mean " + " or ".join(f"`{s}`" for s in suggestions) + "?"
    else:
        names = [f.name for f in adaptor.functions][:_LISTED]
        more = ", ..." if len(adaptor.functions) > _LISTED else ""
        hint = f"its functions are {', '.join(names)}{more}" if names else "it lists none"
    return f"`{name}` is not a function of {where}: {hint}"


def operation_problems(source: Source, adaptor: Adaptor) -> list[RawProblem]:
    """One ``unknown_operation`` problem per load-time call ``adaptor`` does not offer."""
    raws = []
    for call in load_time_calls(source.root):
        name = called_name(source, call)
        if name is not None and not adaptor.has_call(name):
            message = unknown_operation_message(adaptor, name)
            raws.append(RawProblem("lint", UNKNOWN_OPERATION, call.start_byte, message))
    return raws
