"""Adaptor calls that pass a relative path: they need a ``baseUrl`` from the step's
credential.

language-http and language-fhir resolve a path that is not an absolute URL against
``state.configuration.baseUrl``; without one the run fails (the CLI's
``UNEXPECTED_RELATIVE_URL``: "You passed a relative URL but didn't set baseUrl").
A call is counted when one of its arguments, at the position of a parameter the
facts name ``path`` (or ``url``), is a string or template literal that does not
start with a scheme (``https://``). Anything else (a variable, a function of state)
cannot be read without running the code and is not counted: precise or silent.
"""

from __future__ import annotations

import functools
import re

from tools.catalogue.adaptors import Adaptor
from tools.jobcode.operations import called_name, load_time_calls
from tools.jobcode.parse import COMMENT_TYPES, Source

_PATH_PARAMS = frozenset({"path", "url"})
_ABSOLUTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


_LITERALS = frozenset({"string", "template_string"})


# Validation asks this after every edit of a workflow: each body is parsed once.
@functools.lru_cache(maxsize=4096)
def _relative_paths(
    body: str, signatures: tuple[tuple[str, tuple[str, ...]], ...]
) -> tuple[str, ...]:
    source = Source(body)
    if source.root.has_error:
        return ()
    params_of = dict(signatures)
    found: list[str] = []
    for call in load_time_calls(source.root):
        name = called_name(source, call)
        params = params_of.get(name or "")
        arguments = call.child_by_field_name("arguments")
        if params is None or arguments is None:
            continue
        nodes = [n for n in arguments.named_children if n.type not in COMMENT_TYPES]
        for param, node in zip(params, nodes, strict=False):
            if param not in _PATH_PARAMS:
                continue
            text = source.text(node)[1:-1] if node.type in _LITERALS else None
            # `${base}/orders` may well be absolute: unknown without running it.
            if text is not None and not _ABSOLUTE.match(text) and not text.startswith("${"):
                found.append(f"{name}({source.text(node)})")
    return tuple(dict.fromkeys(found))


def relative_path_calls(body: str | None, adaptor: Adaptor | None) -> list[str]:
    """The calls in ``body`` (``get('orders')``) that pass ``adaptor`` a relative path."""
    if not body or adaptor is None:
        return []
    signatures = _signatures(adaptor)
    return list(_relative_paths(body, signatures)) if signatures else []


_SIGNATURES: dict[tuple[str, str], tuple[tuple[str, tuple[str, ...]], ...]] = {}


def _signatures(adaptor: Adaptor) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The functions of ``adaptor`` that take a path, with their parameters (kept: this
    runs for every step after every edit)."""
    key = (adaptor.name, adaptor.version)
    found = _SIGNATURES.get(key)
    if found is None:
        found = _SIGNATURES[key] = tuple(
            (f.name, f.params)
            for f in adaptor.functions
            if f.params_known and _PATH_PARAMS.intersection(f.params)
        )
    return found
