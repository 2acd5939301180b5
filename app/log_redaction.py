"""Keep secrets out of server logs.

WebSocket clients pass their bearer token as ``?token=`` (browsers cannot set
headers on a WebSocket), and uvicorn logs every request line with its query
string. A filter on uvicorn's loggers rewrites ``token=...`` (and bearer
values) in the record's template and arguments before any handler formats it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from agents.masking import mask_text

_TOKEN_IN_QUERY = re.compile(r"([?&](?:token|access_token|api_key)=)[^&\s\"']+", re.I)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]+")
REDACTED = "[redacted]"
LOGGERS = ("uvicorn.access", "uvicorn.error", "uvicorn", "app")


def redact(text: str) -> str:
    """Tokens in query strings and bearer values, then every secret shape the
    trace masker knows (job code and messages can end up in log lines too)."""
    text = mask_text(text)
    return _BEARER.sub(r"\1" + REDACTED, _TOKEN_IN_QUERY.sub(r"\1" + REDACTED, text))


def _redact_value(value: Any) -> Any:
    return redact(value) if isinstance(value, str) else value


class RedactSecrets(logging.Filter):
    """Redacts the message template and each string argument in place.

    The arguments stay arguments: uvicorn's access formatter unpacks
    ``record.args`` itself (client, method, path, version, status), so folding
    them into the message would break every access line that had a token.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redact_value(a) for a in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {k: _redact_value(v) for k, v in record.args.items()}
        return True


def install() -> None:
    """Add the filter to the server's loggers (idempotent)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())
