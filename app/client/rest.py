"""The service's REST API as the terminal client calls it."""

from __future__ import annotations

import argparse
import os
from typing import Any

import httpx

DEFAULT_URL = "http://127.0.0.1:8000"


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """``--url`` and ``--token``, defaulting to ``$PLANWRIGHT_URL`` and ``$PLANWRIGHT_TOKEN``."""
    parser.add_argument(
        "--url",
        default=os.environ.get("PLANWRIGHT_URL", DEFAULT_URL),
        help=f"service URL (default: $PLANWRIGHT_URL or {DEFAULT_URL})",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("PLANWRIGHT_TOKEN"),
        help="bearer token (default: $PLANWRIGHT_TOKEN; none in single-user mode)",
    )


class ChatError(Exception):
    """A problem that ends the client with a message and an exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message, self.code = message, code


class Rest:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ChatError(
                f"cannot reach {self.http.base_url} ({exc.__class__.__name__}): "
                "is `planwright serve` running there?",
                2,
            ) from exc
        if response.status_code == 401:
            raise ChatError(
                "the server needs a valid token: pass --token or set PLANWRIGHT_TOKEN", 2
            )
        if response.is_error:
            try:
                message = response.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = response.text[:200] or response.reason_phrase
            raise ChatError(message, 1)
        return response.json()
