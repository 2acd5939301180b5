"""Keep secrets out of server logs.

WebSocket clients pass their bearer token as ``?token=`` (browsers cannot set
headers on a WebSocket), and uvicorn logs every request line with its raw
query string; request bodies reach the logs inside exception texts (a database
error carries its SQL parameters). Every log record is redacted where it is
made: a record factory (``logging.setLogRecordFactory``) rewrites its message,
arguments, formatted exception and stack before any handler sees it.

A factory and not a filter: Python applies a logger's filters only to records
logged on that very logger, not to those of its children (``app.turns``), and
handler filters are lost when uvicorn's ``dictConfig`` replaces the handlers
(``planwright serve`` builds the app, and so installs this, before uvicorn
configures logging). The factory is process-wide and outlives both.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote_plus

from agents.api import is_secret_name, mask_text

_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]+")
# "name=" after "?", "&" or ";": the name as the client wrote it, percent-encoded or not.
_QUERY_NAME = re.compile(r"[?&;](?P<name>[^=&;#?\s\"'`]{1,200})=")
# A value runs to the next parameter, a fragment or a space; a quote ends it only
# when the quote closes something (a quoted path in a log line), not inside a token.
_VALUE_END = re.compile(r"[&#\s]|[\"'`](?=[\s,;)\]}>]|$)")
# Names that carry keys in query strings (as the trace masker's query rule).
_SECRET_PARAM = re.compile(r"(?i)key|token|secret|pass|pwd|auth|sig|credential|^code$")
# uvicorn's records keep their arguments, each redacted: its access formatter
# unpacks them (client, method, path, version, status), and on a terminal its
# other lines are formatted again from ``extra={"color_message": ...}`` with them.
_ARGUMENTS_KEPT = "uvicorn"
_FORMATTER = logging.Formatter()
REDACTED = "[redacted]"


def _decoded(name: str) -> str:
    """The name as the server reads it; decoded until stable, so that no
    encoding, however deep, makes a secret name look harmless."""
    for _ in range(4):
        decoded = unquote_plus(name)
        if decoded == name:
            break
        name = decoded
    return name


def _is_secret_parameter(name: str) -> bool:
    name = _decoded(name)
    return bool(_SECRET_PARAM.search(name)) or is_secret_name(name) or is_secret_name(name.lower())


def _redact_query(text: str) -> str:
    """Query parameters whose decoded name is secret (``to%6Ben=``) lose their value."""
    out: list[str] = []
    position = 0
    while (match := _QUERY_NAME.search(text, position)) is not None:
        start = match.end()
        if not _is_secret_parameter(match.group("name")):
            # the value may hold more parameters (";token=" after "?x=1")
            out.append(text[position:start])
            position = start
            continue
        end_match = _VALUE_END.search(text, start)
        end = len(text) if end_match is None else end_match.start()
        value = text[start:end]
        out.append(text[position:start] + (REDACTED if value else ""))
        position = end
    out.append(text[position:])
    return "".join(out)


def redact(text: str) -> str:
    """Tokens in query strings and bearer values, then every secret shape the
    trace masker knows (job code and messages can end up in log lines too)."""
    text = _redact_query(mask_text(text))
    return _BEARER.sub(r"\1" + REDACTED, text)


def _redact_value(value: Any) -> Any:
    return redact(value) if isinstance(value, str) else value


def redact_record(record: logging.LogRecord) -> None:
    """Redacts ``record`` in place: message, arguments, exception and stack."""
    message = None
    if record.name.partition(".")[0] != _ARGUMENTS_KEPT:
        # Redacting the template and each argument apart misses a secret split
        # between them ("Bearer %s") or inside an object argument ("%r", exc).
        with contextlib.suppress(Exception):  # a broken call: its handler reports it
            message = record.getMessage()
    if message is not None:
        record.msg, record.args = redact(message), ()
    else:
        record.msg = _redact_value(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redact_value(a) for a in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {k: _redact_value(v) for k, v in record.args.items()}
    if record.exc_info and not record.exc_text:
        # Formatters use exc_text when it is set rather than formatting exc_info.
        record.exc_text = redact(_FORMATTER.formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


class _RedactingFactory:
    """A log record factory: the previous one's record, redacted."""

    def __init__(self, previous: Callable[..., logging.LogRecord]) -> None:
        self.previous = previous
        """The factory that was installed before (the records are made by it)."""

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.previous(*args, **kwargs)
        redact_record(record)
        return record


def install() -> None:
    """Redact every log record of the process from now on (idempotent)."""
    current = logging.getLogRecordFactory()
    if not isinstance(current, _RedactingFactory):
        logging.setLogRecordFactory(_RedactingFactory(current))
