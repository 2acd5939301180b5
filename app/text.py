"""String types for input from clients."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path
from pydantic import AfterValidator

from tools.document.yaml_io import is_unstorable


def _no_nul(value: str) -> str:
    # Postgres text cannot hold NUL, and an unpaired surrogate (JSON can spell one:
    # "\ud800") cannot be encoded for any database: refuse both at the edge.
    if is_unstorable(value):
        raise ValueError("must not contain NUL characters or unpaired surrogates")
    return value


ClientText = Annotated[str, AfterValidator(_no_nul)]
"""Any text a client sends in a body or frame."""

PathId = Annotated[str, Path(max_length=200), AfterValidator(_no_nul)]
"""A workflow or session id in a URL path: refused (422) before it reaches the store."""
