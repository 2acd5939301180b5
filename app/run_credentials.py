"""Clearing a test run of its credentials (DESIGN §5c).

A run request's ``configuration`` reaches the runner and nothing else. The finished
run is cleared of it before anything stores, returns, streams or logs it
(:func:`without_credentials`): every ``configuration`` key in a state is dropped and
each credential value is replaced by ``***`` wherever it shows (a step that logged
its password, an error that quoted it). :func:`masked` does the same for one text
(the runner's own error messages and tracebacks).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from agents.api import MASK, MIN_SECRET_CHARS, PUBLIC_CONFIGURATION_KEYS
from tools.testrun import RunRequest, TestRun

ADDRESS_KEYS = PUBLIC_CONFIGURATION_KEYS
"""Configuration fields that say where a service is, not how to get in (the runner's own
list): kept in the run's request URLs unless they carry a user or password
(``https://u:p@host``)."""


def _leaves(value: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, key)
    else:
        yield key, value


def given_credentials(request: RunRequest) -> dict[str, Any]:
    """A request's credentials: its credential map, its ``configuration``, and a
    ``configuration`` in its input state (the runtime gives that one to the first step)."""
    inline = request.input.get("configuration")
    return {
        "credentials": request.credentials or {},
        "configuration": request.configuration or {},
        "inline": inline if isinstance(inline, dict) else {},
    }


def credential_values(configuration: dict[str, Any] | None) -> list[str]:
    """The texts of ``configuration`` to keep out of a run, longest first (a value that
    holds another is replaced whole)."""
    found: set[str] = set()
    for key, value in _leaves(configuration or {}):
        if isinstance(value, bool) or value is None:
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        if key in ADDRESS_KEYS and "@" not in text:
            continue
        if len(text) >= MIN_SECRET_CHARS:
            found.add(text)
    return sorted(found, key=len, reverse=True)


def masked(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _cleared(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, dict):
        return {
            masked(str(k), secrets): _cleared(v, secrets)
            for k, v in value.items()
            if k != "configuration"
        }
    if isinstance(value, list):
        return [_cleared(v, secrets) for v in value]
    if isinstance(value, str):
        # A lone surrogate (JSON can spell one) cannot be encoded for any database or response.
        return masked(_LONE_SURROGATE.sub("\ufffd", value), secrets)
    if secrets and isinstance(value, (int, float)) and not isinstance(value, bool):
        return MASK if json.dumps(value) in secrets else value
    return value


def without_credentials(run: TestRun, configuration: dict[str, Any] | None) -> TestRun:
    """``run`` with no ``configuration`` key in any state and every credential value of
    ``configuration`` replaced by ``***`` in every field; lone surrogates replaced."""
    data = _cleared(run.model_dump(mode="json"), credential_values(configuration))
    return TestRun.model_validate(data)
