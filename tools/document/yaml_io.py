"""Safe round-trip YAML loading and the one emitter configuration.

ruamel.yaml's round-trip mode keeps comments, key order and quoting. On top
of it this module refuses what a workflow document never needs and an
attacker might send: anchors and aliases (the "billion laughs" family),
custom tags, absurd nesting, duplicate keys and oversized input.

ruamel's round-trip scanner is pure Python (~0.7 ms per job: 2 s for a 3,000-job
import). A text that cannot hold a comment is scanned by libyaml instead
(``ruamel.yaml.clib``'s ``CParser``, about 10x faster), its events composed and
constructed by the same guarded composer and round-trip constructor, so quoting,
block scalars and key order come out the same. Only the scanner differs, and
only where nothing it alone keeps can occur: no ``#`` (comments), folded
scalars, directives or tabs. Whatever libyaml does not accept cleanly is parsed
again by the pure scanner, whose answer (or error) stands.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent
from ruamel.yaml.main import CParser

from tools.errors import DocumentError

DEFAULT_MAX_BYTES = 1024 * 1024
DEFAULT_MAX_DEPTH = 32
# Wide enough that no scalar is ever re-folded on dump: documents round-trip.
EMIT_WIDTH = 4096
# Only the YAML core schema's own tags: "!!python/..." shares the prefix but not the safety.
# NUL (which Postgres text cannot hold) and unpaired surrogates (which no encoding can
# write), raw or spelled as YAML escapes: no workflow needs either.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_ALLOWED_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp", "binary")
)


class _GuardedComposer(Composer):
    """Composer that rejects aliases, anchors, custom tags and deep nesting."""

    max_depth = DEFAULT_MAX_DEPTH

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            raise DocumentError(
                f"YAML aliases are not allowed (line {event.start_mark.line + 1}).",
                code="yaml_alias_not_allowed",
            )
        if isinstance(event, ScalarEvent):
            if event.style == "":
                event.style = None  # libyaml's "plain", as the pure scanner writes it
            if is_unstorable(event.value):
                raise _unstorable(f"line {event.start_mark.line + 1}")
        if isinstance(event, (ScalarEvent, CollectionStartEvent)):
            if event.anchor is not None:
                raise DocumentError(
                    f"YAML anchors are not allowed (line {event.start_mark.line + 1}).",
                    code="yaml_alias_not_allowed",
                )
            tag = event.tag
            if tag is not None and tag != "!" and str(tag) not in _ALLOWED_TAGS:
                raise DocumentError(
                    f"YAML tag {tag!s} is not allowed (line {event.start_mark.line + 1}).",
                    code="yaml_tag_not_allowed",
                )
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                raise DocumentError(
                    f"The document is nested more than {self.max_depth} levels deep.",
                    code="yaml_too_deep",
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def make_yaml() -> YAML:
    """The round-trip YAML instance used for every load and dump."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = EMIT_WIDTH
    yaml.allow_duplicate_keys = False
    return yaml


def is_unstorable(value: str) -> bool:
    """Whether ``value`` holds a NUL or an unpaired surrogate (cheap for plain ASCII)."""
    return ("\x00" in value or not value.isascii()) and _UNSTORABLE.search(value) is not None


def _unstorable(where: str) -> DocumentError:
    return DocumentError(
        f"The document holds a NUL character or an unpaired surrogate ({where}); remove it.",
        code="invalid_character",
    )


def check_storable(value: Any, where: str) -> None:
    """Refuse a value to be written into a document that holds a NUL character or an
    unpaired surrogate anywhere in its text (``invalid_character``): the document
    would emit it escaped, and then never load again."""
    if isinstance(value, str):
        if is_unstorable(value):
            raise _unstorable(where)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_storable(key, where)
            check_storable(item, where)
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_storable(item, where)


def check_size(text: str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Refuse a document text over ``max_bytes`` in UTF-8 (``document_too_large``), or
    one that cannot be written in UTF-8 at all (``invalid_character``)."""
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        raise _unstorable(f"line {line}") from None
    if size > max_bytes:
        raise DocumentError(
            f"The document is {size} bytes; the limit is {max_bytes} bytes.",
            code="document_too_large",
        )


# What only the pure round-trip scanner keeps or reads as YAML 1.2: comments (any
# "#": a quoted or mid-word one is no comment, but telling needs a scanner) and
# blank lines (ruamel keeps them as comments too: any blank line, even one inside a
# block scalar), folded block scalars (their fold points), %YAML directives (the
# version), and where the two scanners' rules differ (found by
# tests/tools/test_yaml_fast_load.py): tabs, carriage returns, the Unicode line
# breaks (NEL, LS, PS), byte order marks and a "!" that may be a tag.
_PURE_ONLY = re.compile(
    r"#|\n *\n|\A *\n|\n +\Z|>[-+0-9]* *$|^%|[\t\r\x85\u2028\u2029\ufeff]|(?:^|[ \[{,])!",
    re.MULTILINE,
)


def _fast_load(text: str, composer: type[Composer]) -> Any:
    """``text`` through libyaml's scanner and parser, then the round-trip composer
    and constructor; ``None`` where the pure scanner must read it (see the module)."""
    if CParser is None or _PURE_ONLY.search(text):
        return None
    yaml = make_yaml()
    yaml.Composer = composer
    parser = CParser(text)
    setattr(yaml, "_parser", parser)  # noqa: B010 - what ``yaml.parser`` hands the composer
    try:
        return yaml.constructor.get_single_data()
    except Exception:  # any doubt: the pure scanner answers
        return None
    finally:
        parser.dispose()


def load_yaml(
    text: str, *, max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH
) -> Any:
    """Parse ``text`` into ruamel round-trip data, refusing hostile constructs."""
    check_size(text, max_bytes)
    composer: type[Composer] = type("Composer", (_GuardedComposer,), {"max_depth": max_depth})
    fast = _fast_load(text, composer)
    if fast is not None:
        return fast
    yaml = make_yaml()
    yaml.Composer = composer
    try:
        return yaml.load(text)
    except DocumentError:
        raise
    except DuplicateKeyError as exc:
        raise DocumentError(_marked_message(exc), code="duplicate_key") from exc
    except (YAMLError, MarkedYAMLError) as exc:
        raise DocumentError(f"Invalid YAML: {_marked_message(exc)}", code="invalid_yaml") from exc
    except RecursionError as exc:  # defence in depth; the depth guard fires first
        raise DocumentError("The document is nested too deeply.", code="yaml_too_deep") from exc
    except ValueError as exc:
        # Scalars the constructor cannot turn into values: an integer longer than
        # Python's digit limit, an impossible date such as 2024-13-45.
        if "integer string conversion" in str(exc):
            raise DocumentError(
                "The document holds a number with too many digits "
                f"(more than {sys.get_int_max_str_digits()}); quote it to keep it as text.",
                code="number_too_long",
            ) from exc
        raise DocumentError(
            f"The document holds a value that cannot be read: {exc}.", code="invalid_value"
        ) from exc


def dump_yaml(data: Any, yaml: YAML | None = None) -> str:
    stream = io.StringIO()
    (yaml or make_yaml()).dump(data, stream)
    return stream.getvalue()


def _marked_message(exc: Exception) -> str:
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def dig(node: Any, path: Sequence[str]) -> Any:
    """The value at ``path`` of nested mappings, ``None`` where the path stops."""
    for part in path:
        node = node.get(part) if isinstance(node, Mapping) else None
    return node
