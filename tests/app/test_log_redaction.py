from __future__ import annotations

import contextlib
import copy
import io
import logging
import logging.config
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn.config

from agents.tracing import mask_secrets
from app import log_redaction
from app.main import create_app
from tests.app.service.helpers import make_settings


def test_tokens_in_websocket_lines_are_redacted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    create_app(make_settings(tmp_path))  # installs the redaction, as under uvicorn --factory
    logger = logging.getLogger("uvicorn.error")
    with caplog.at_level(logging.INFO, logger="uvicorn.error"):
        logger.info(
            '%s - "WebSocket %s" [accepted]',
            "127.0.0.1:5000",
            "/v1/sessions/abc/ws?token=editor-token-123456&since_version=3",
        )
        logger.info("Authorization: Bearer sk-very-secret-value")
    text = caplog.text
    assert "editor-token-123456" not in text and "sk-very-secret-value" not in text
    assert "?token=[redacted]&since_version=3" in text


def test_redact_leaves_ordinary_text_alone() -> None:
    line = 'GET /v1/workflows?name=tokenizer HTTP/1.1" 200'
    assert log_redaction.redact(line) == line


def test_trace_masking_keeps_token_counts_and_hides_secrets() -> None:
    masked = mask_secrets(
        data={
            "usage": {"input_tokens": 5, "output_tokens": 3},
            "max_tokens": 100,
            "token": "abc",
            "api_key": "k",
            "note": "password=hunter2, key sk-ant-api03-XYZ",
        }
    )
    assert masked["usage"] == {"input_tokens": 5, "output_tokens": 3}
    assert masked["max_tokens"] == 100
    assert masked["token"] == "***" and masked["api_key"] == "***"
    assert "hunter2" not in masked["note"] and "XYZ" not in masked["note"]


# Secrets the reviewer got into the server's logs (issue 15, D5 and D6).
TOKEN = "attack-editor-token-0123456789"
SQL_ERROR = (
    "(psycopg.DataError) invalid byte sequence\n"
    "[SQL: INSERT INTO sessions (project_id) VALUES (%(project_id)s)]\n"
    "[parameters: ('password=LEAKPW1 Authorization: Bearer LEAKBEARER2 "
    "https://u:LEAKURL3@host',)]"
)
LEAKS = ("LEAKPW1", "LEAKBEARER2", "LEAKURL3", TOKEN)


@pytest.mark.parametrize(
    "query",
    [
        f"to%6Ben={TOKEN}",
        f"%74oken={TOKEN}",
        f"%74%6F%6B%65%6E={TOKEN}",
        f"TO%6BEN={TOKEN}",
        f"since_version=3&access%5Ftoken={TOKEN}",
        f"x=1;%74oken={TOKEN}",
        f"x=1&api%2Dkey={TOKEN}",
        f"to%256Ben={TOKEN}",
    ],
)
def test_a_percent_encoded_parameter_name_does_not_hide_its_value(query: str) -> None:
    line = f'127.0.0.1:5000 - "GET /v1/workflows/abc?{query} HTTP/1.1" 401'
    redacted = log_redaction.redact(line)
    assert TOKEN not in redacted
    assert redacted.endswith('=[redacted] HTTP/1.1" 401'), redacted


def test_only_secret_parameters_are_redacted() -> None:
    line = '"WebSocket /v1/sessions/a/ws?since_version=3&%74oken=abcdef123456&page=2" [accepted]'
    assert log_redaction.redact(line) == (
        '"WebSocket /v1/sessions/a/ws?since_version=3&%74oken=[redacted]&page=2" [accepted]'
    )


def _sql_failure() -> BaseException:
    try:
        try:
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        except UnicodeEncodeError as exc:
            raise RuntimeError(SQL_ERROR) from exc
    except RuntimeError as exc:
        return exc


@contextlib.contextmanager
def _uvicorn_logging(
    *, install_first: bool, colors: bool = False
) -> Iterator[dict[str, io.StringIO]]:
    """Logging configured as uvicorn does (its own LOGGING_CONFIG through dictConfig),
    with nothing on the root logger, so ``app.*`` records end in ``logging.lastResort``
    as they do under ``uvicorn app.main:create_app --factory`` and ``planwright serve``.
    ``install_first``: the order of ``planwright serve`` (create_app, then uvicorn.run
    configures logging); else the order of ``--factory``."""
    streams = {"stderr": io.StringIO(), "stdout": io.StringIO(), "last_resort": io.StringIO()}
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config["handlers"]["default"]["stream"] = streams["stderr"]
    config["handlers"]["access"]["stream"] = streams["stdout"]
    config["formatters"]["default"]["use_colors"] = colors  # as on a terminal
    names = ("uvicorn", "uvicorn.error", "uvicorn.access")
    saved = [
        (lg, lg.handlers[:], lg.filters[:], lg.level, lg.propagate)
        for lg in [logging.getLogger(), *map(logging.getLogger, names)]
    ]
    factory, last_resort = logging.getLogRecordFactory(), logging.lastResort
    # A process that never installed the filter: later tests install it again.
    logging.setLogRecordFactory(logging.LogRecord)
    for name in (*names, "app"):
        for f in logging.getLogger(name).filters[:]:
            logging.getLogger(name).removeFilter(f)
    try:
        if install_first:
            log_redaction.install()
        logging.config.dictConfig(config)
        if not install_first:
            log_redaction.install()
        logging.getLogger().handlers.clear()  # pytest's capture handlers
        logging.lastResort = logging.StreamHandler(streams["last_resort"])
        logging.lastResort.setLevel(logging.WARNING)
        yield streams
    finally:
        logging.setLogRecordFactory(factory)
        logging.lastResort = last_resort
        for lg, handlers, filters, level, propagate in saved:
            lg.handlers[:], lg.filters[:] = handlers, filters
            lg.setLevel(level)
            lg.propagate = propagate


@pytest.mark.parametrize("install_first", [True, False], ids=["serve", "factory"])
def test_secrets_stay_out_of_every_line_the_server_writes(install_first: bool) -> None:
    with _uvicorn_logging(install_first=install_first) as streams:
        access = logging.getLogger("uvicorn.access")
        access.info(
            '%s - "%s %s HTTP/%s" %d',
            "127.0.0.1:5000",
            "GET",
            f"/v1/workflows/abc?to%6Ben={TOKEN}",
            "1.1",
            401,
        )
        error = logging.getLogger("uvicorn.error")
        error.info('%s - "WebSocket %s" [accepted]', "127.0.0.1:5000", f"/ws?%74oken={TOKEN}")
        error.error("Exception in ASGI application", exc_info=_sql_failure())
        turns = logging.getLogger("app.turns")
        turns.warning("retrying with Authorization: Bearer LEAKBEARER2")
        turns.warning("connect failed: %r", ConnectionError("redis://:LEAKPW1@cache:6379/0"))
        turns.warning("sent Authorization: Bearer %s", "LEAKBEARER2")
        try:
            raise _sql_failure()
        except RuntimeError:
            turns.exception("turn %s failed", "t1")
    out, err, last = (streams[k].getvalue() for k in ("stdout", "stderr", "last_resort"))
    assert '"GET /v1/workflows/abc?to%6Ben=[redacted] HTTP/1.1" 401' in out
    assert "/ws?%74oken=[redacted]" in err
    assert "Exception in ASGI application" in err and "Traceback" in err
    assert "UnicodeEncodeError" in err and "RuntimeError" in err
    assert "turn t1 failed" in last and "Traceback" in last and "retrying with" in last
    leaked = sorted(
        (name, leak) for name, s in streams.items() for leak in LEAKS if leak in s.getvalue()
    )
    assert not leaked, (out, err, last)


def test_stack_info_is_redacted() -> None:
    with _uvicorn_logging(install_first=False) as streams:
        # the stack shows this source line, and with it the secret in the comment
        logging.getLogger("app.bus.redis").warning("here", stack_info=True)  # password=LEAKPW1
    last = streams["last_resort"].getvalue()
    assert "Stack (most recent call last)" in last
    assert "LEAKPW1" not in last


def test_uvicorn_lines_in_colour_keep_their_arguments() -> None:
    """On a terminal uvicorn formats ``color_message`` with the record's arguments."""
    with _uvicorn_logging(install_first=True, colors=True) as streams:
        logging.getLogger("uvicorn.error").info(
            "Started server process [%d]",
            4321,
            extra={"color_message": "Started server process [\x1b[36m%d\x1b[0m]"},
        )
        logging.getLogger("uvicorn.error").info(
            '%s - "WebSocket %s" [accepted]', "127.0.0.1:5000", f"/ws?to%6Ben={TOKEN}"
        )
    err = streams["stderr"].getvalue()
    assert "Started server process [\x1b[36m4321\x1b[0m]" in err, err
    assert "/ws?to%6Ben=[redacted]" in err and TOKEN not in err
