from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from tests.service.conftest import make_settings


def test_health_reports_offline_model_without_a_key(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path, tokens=None))) as client:
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "model": "offline"}


def test_tool_definitions_respect_read_only(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path))) as client:
        everything = {t["name"] for t in client.get("/v1/tools").json()}
        read_only = {t["name"] for t in client.get("/v1/tools?read_only=true").json()}
    assert "add_jobs" in everything
    assert read_only == {"inspect_job_code", "search_documentation"}


def test_settings_keep_secrets_secret() -> None:
    settings = Settings(
        anthropic_api_key="sk-ant-very-secret", tokens='{"tok-very-secret-123": "editor"}'
    )
    assert "sk-ant-very-secret" not in repr(settings)
    assert "tok-very-secret-123" not in repr(settings)
    assert settings.uses_anthropic


def test_no_tokens_means_loopback_only() -> None:
    import pytest

    with pytest.raises(ValueError, match="without PLANWRIGHT_TOKENS"):
        Settings(host="0.0.0.0", tokens=None)
    assert Settings(host="0.0.0.0", tokens='{"t": "editor"}').host == "0.0.0.0"
    with pytest.raises(ValueError, match="production needs"):
        Settings(environment="production", tokens=None)
