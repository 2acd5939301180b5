"""Keep secrets out of server logs.

WebSocket clients pass their bearer token as ``?token=`` (browsers cannot set
headers on a WebSocket), and uvicorn logs every request line with its query
string. A filter on uvicorn's loggers rewrites ``token=...`` before any
handler formats the record.
"""

from __future__ import annotations

import logging
import re

_TOKEN_IN_QUERY = re.compile(r"([?&](?:token|access_token|api_key)=)[^&\s\"']+", re.I)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]+")
REDACTED = "[redacted]"
LOGGERS = ("uvicorn.access", "uvicorn.error", "uvicorn", "app")


def redact(text: str) -> str:
    return _BEARER.sub(r"\1" + REDACTED, _TOKEN_IN_QUERY.sub(r"\1" + REDACTED, text))


class RedactSecrets(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def install() -> None:
    """Add the filter to the server's loggers (idempotent)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())
