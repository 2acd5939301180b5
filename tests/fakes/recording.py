"""What the fake Messages API received, as recorded before any check ran."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake received (recorded before validation)."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    """Lower-case header names."""
    json: Any
    """The decoded JSON body, or ``None`` if it did not parse."""
    raw_body: bytes
    timestamp: float

    def _field(self, name: str) -> Any:
        return self.json.get(name) if isinstance(self.json, dict) else None

    @property
    def model(self) -> Any:
        return self._field("model")

    @property
    def max_tokens(self) -> Any:
        return self._field("max_tokens")

    @property
    def system(self) -> Any:
        return self._field("system")

    @property
    def messages(self) -> Any:
        return self._field("messages")

    @property
    def tools(self) -> Any:
        return self._field("tools")

    @property
    def tool_choice(self) -> Any:
        return self._field("tool_choice")

    @property
    def stream(self) -> bool:
        return self._field("stream") is True

    @property
    def anthropic_version(self) -> str | None:
        return self.headers.get("anthropic-version")

    @property
    def anthropic_beta(self) -> list[str]:
        """The ``anthropic-beta`` header split on commas (empty if absent)."""
        raw = self.headers.get("anthropic-beta", "")
        return [part.strip() for part in raw.split(",") if part.strip()]

    @property
    def api_key(self) -> str | None:
        """The credential sent, from ``x-api-key`` or ``Authorization: Bearer``."""
        if key := self.headers.get("x-api-key"):
            return key
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[len("bearer ") :].strip() or None
        return None

    @property
    def retry_count(self) -> int | None:
        """The SDK's ``x-stainless-retry-count`` header (0 on the first attempt)."""
        raw = self.headers.get("x-stainless-retry-count")
        return int(raw) if raw is not None and raw.isdigit() else None
