from __future__ import annotations

from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings


def test_health_reports_offline_model_without_a_key() -> None:
    with TestClient(create_app(Settings(anthropic_api_key=None))) as client:
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "model": "offline"}


def test_tool_definitions_respect_read_only() -> None:
    with TestClient(create_app(Settings())) as client:
        everything = {t["name"] for t in client.get("/v1/tools").json()}
        read_only = {t["name"] for t in client.get("/v1/tools?read_only=true").json()}
    assert "add_jobs" in everything
    assert read_only == {"inspect_job_code", "search_documentation"}


def test_settings_keep_the_key_secret() -> None:
    settings = Settings(anthropic_api_key="sk-ant-very-secret")
    assert "sk-ant-very-secret" not in repr(settings)
    assert settings.uses_anthropic
