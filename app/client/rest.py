"""The service's REST API as the terminal client calls it."""

from __future__ import annotations

from typing import Any

import httpx


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
