"""Credential values out of test-run reports: which configuration values are secrets,
and every occurrence of them (as is, JSON-escaped, URL-encoded) replaced by ``***``.
The service's own sweep of stored runs (:mod:`app.run_credentials`) uses the same rule."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

# Configuration keys whose values are addresses, not secrets: reports keep them
# (a request's URL is built from them). Every other string value is masked.
PUBLIC_CONFIGURATION_KEYS = frozenset(
    {"baseUrl", "hostUrl", "host", "url", "apiPath", "apiVersion", "instanceUrl", "loginUrl"}
)
MASK = "***"
MIN_SECRET_CHARS = 3  # shorter credential values are not searched for (every "a" would go)


def secret_values(configuration: Mapping[str, Any] | None) -> list[str]:
    """The configuration's string values a report must never carry (longest first)."""
    found: set[str] = set()

    def walk(value: Any, key: str | None) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            text = str(value)
            public = key in PUBLIC_CONFIGURATION_KEYS and "@" not in text  # no https://u:p@h
            if not public and len(text) >= MIN_SECRET_CHARS:
                # as is, inside JSON text, and URL-encoded (a query string, a form body)
                found.update({text, json.dumps(text)[1:-1], quote(text, safe="-_.!~*'()")})
                found.add(quote_plus(text, safe="*~"))

    walk(configuration or {}, None)
    return sorted(found, key=len, reverse=True)


def mask(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with every occurrence of a secret replaced by ``***`` (keys too)."""
    secrets = list(secrets)
    if not secrets:
        return value

    def text(s: str) -> str:
        for secret in secrets:
            if secret in s:
                s = s.replace(secret, MASK)
        return s

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return text(v)
        if isinstance(v, Mapping):
            return {text(str(k)): walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(value)
