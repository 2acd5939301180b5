from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agents.tracing import mask_secrets
from app import log_redaction
from app.main import create_app
from tests.app.service.conftest import make_settings


def test_tokens_in_websocket_lines_are_redacted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    create_app(make_settings(tmp_path))  # installs the filter, as under uvicorn --factory
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
