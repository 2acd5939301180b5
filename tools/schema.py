"""JSON schemas the model sees, generated from pydantic models (never written by hand)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with ``$ref``s inlined and titles dropped."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(defs[node["$ref"].rsplit("/", 1)[-1]])
            # "title" annotations only; a property *named* title maps to a dict.
            return {
                k: inline(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))
            }
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    inlined: dict[str, Any] = inline(schema)
    return inlined
