"""JSON schemas the model sees, generated from pydantic models (never written by hand)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def _optional(node: dict[str, Any]) -> dict[str, Any]:
    """An optional field that defaults to null, as its type alone.

    Pydantic writes ``X | None = None`` as ``anyOf: [X, {type: null}]`` with ``default:
    null``; a field left out of ``required`` already says it may be omitted, and the
    model never needs to send null for it. The form costs ~15 tokens a field on every
    request, so it is written as ``X`` (with its description).
    """
    options = node.get("anyOf")
    if node.get("default", 0) is not None or not isinstance(options, list) or len(options) != 2:
        return node
    kept = [o for o in options if o != {"type": "null"}]
    if len(kept) != 1 or not isinstance(kept[0], dict):
        return node
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
    return {**kept[0], **rest}


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with ``$ref``s inlined, titles dropped and optional fields
    written as their type (:func:`_optional`). The top-level description is left out:
    the tool's own description says it. So is a nested model's docstring: the field
    that holds it describes it (a ``$ref``'s sibling keys, the field's own description
    among them, are kept), and the docstring would be repeated in every tool that
    nests the model."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    schema.pop("description", None)

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = defs[node["$ref"].rsplit("/", 1)[-1]]
                nested = {k: v for k, v in target.items() if k != "description"}
                siblings = {k: v for k, v in node.items() if k != "$ref"}
                return inline({**nested, **siblings})
            # "title" annotations only; a property *named* title maps to a dict.
            return _optional(
                {k: inline(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
            )
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    inlined: dict[str, Any] = inline(schema)
    return inlined
