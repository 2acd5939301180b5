"""Each adaptor call's arguments against the parameter list the adaptor publishes.

The facts (``adaptors.facts.json``) give every documented function's parameter
*names* in order, e.g. language-http's ``post(path, data, options)``. From those:

- **too many arguments** (``wrong_arity``): a call passing more arguments than the
  function has parameters. The facts write a rest parameter by its name only
  (language-common's ``log(...args)`` is ``["args"]``), so a function whose last
  parameter is a rest-like name (:data:`_VARIADIC`) takes any number;
- **too few** (``wrong_arity``): a call leaving out a parameter the operation cannot
  do without. Which ones those are the facts do not say, so only the leading
  parameters whose names always mean a required input (:data:`_REQUIRED`: the path,
  the payload, the operation...) count; ``options``, ``callback`` and anything not
  named so is optional;
- **argument kind** (``wrong_argument_kind``): a parameter named as a path or a
  resource type (:data:`_STRING_PARAMS`) given an object, array, number or boolean
  literal: the older ``post({url, body})`` form, which the current adaptors read as a
  path and fail on.

Checked where :mod:`.operations` checks: load-time calls (top-level operations and
those passed to them), never inside callbacks. A call with a spread argument, or to a
function whose parameters the facts do not give, is not checked (silent, never a guess).
"""

from __future__ import annotations

from tree_sitter import Node

from tools.catalogue.adaptors import Adaptor, AdaptorFunction
from tools.jobcode.operations import called_name, load_time_calls
from tools.jobcode.parse import COMMENT_TYPES, RawProblem, Source

WRONG_ARITY = "wrong_arity"
WRONG_ARGUMENT_KIND = "wrong_argument_kind"

_VARIADIC = frozenset({"args", "operations", "rest", "values", "fns"})
_REQUIRED = frozenset(
    {
        "path",
        "url",
        "method",
        "data",
        "body",
        "resource",
        "resourceType",
        "func",
        "operation",
        "dataSource",
        "sqlQuery",
    }
)
_STRING_PARAMS = frozenset({"path", "url", "resourceType", "method"})
_NOT_STRINGS = {
    "object": "an object",
    "array": "an array",
    "number": "a number",
    "true": "a boolean",
    "false": "a boolean",
}


def _arguments(call: Node) -> list[Node] | None:
    """The call's argument nodes, or None when a spread makes their count unknown."""
    arguments = call.child_by_field_name("arguments")
    if arguments is None or arguments.type != "arguments":
        return None  # a tagged template: not an ordinary call
    nodes = [n for n in arguments.named_children if n.type not in COMMENT_TYPES]
    if any(n.type == "spread_element" for n in nodes):
        return None
    return nodes


def _required(function: AdaptorFunction) -> int:
    count = 0
    for param in function.params:
        if param not in _REQUIRED:
            break
        count += 1
    return count


def _signature(adaptor: Adaptor, function: AdaptorFunction) -> str:
    return f"{adaptor.name}@{adaptor.version} publishes {function.signature}"


def _plural(n: int) -> str:
    return f"{n} argument{'s' if n != 1 else ''}"


def call_problems(source: Source, call: Node, adaptor: Adaptor) -> list[RawProblem]:
    """What is wrong with one call's arguments, by the facts' parameter list."""
    name = called_name(source, call)
    function = adaptor.function(name) if name else None
    if function is None or not function.params_known:
        return []
    arguments = _arguments(call)
    if arguments is None:
        return []
    params = function.params
    raws: list[RawProblem] = []
    variadic = bool(params) and params[-1] in _VARIADIC
    if len(arguments) > len(params) and not variadic:
        extra = arguments[len(params)]
        raws.append(
            RawProblem(
                "lint",
                WRONG_ARITY,
                extra.start_byte,
                f"`{name}` takes at most {_plural(len(params))} but is given {len(arguments)}: "
                f"{_signature(adaptor, function)}",
            )
        )
    required = _required(function)
    if len(arguments) < required:
        missing = ", ".join(f"`{p}`" for p in params[len(arguments) : required])
        raws.append(
            RawProblem(
                "lint",
                WRONG_ARITY,
                call.start_byte,
                f"`{name}` needs {missing} (given {_plural(len(arguments))}): "
                f"{_signature(adaptor, function)}",
            )
        )
    for index, (param, argument) in enumerate(zip(params, arguments, strict=False)):
        kind = _NOT_STRINGS.get(argument.type)
        if param in _STRING_PARAMS and kind is not None:
            raws.append(
                RawProblem(
                    "lint",
                    WRONG_ARGUMENT_KIND,
                    argument.start_byte,
                    f"argument {index + 1} of `{name}` is `{param}`, a string (or a function of "
                    f"state returning one), not {kind}: {_signature(adaptor, function)}",
                )
            )
    return raws


def same_major(pinned: str | None, current: str) -> bool:
    """Whether a step pinned to ``pinned`` (None or ``latest``: unpinned) publishes the
    signatures the facts list for ``current``."""
    if pinned is None or pinned == "latest":
        return True
    return pinned.split(".")[0] == current.split(".")[0]


def arity_problems(source: Source, adaptor: Adaptor) -> list[RawProblem]:
    """Every load-time call's argument problems (see the module docstring)."""
    raws: list[RawProblem] = []
    for call in load_time_calls(source.root):
        raws.extend(call_problems(source, call, adaptor))
    return raws
