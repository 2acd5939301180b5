"""In-process service tests: the real app over SQLite and the in-process bus,
with scripted models."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models import ScriptedModel
from app.main import create_app
from app.settings import Settings
from tests.documents import REFERRAL_DOC

EDITOR = "editor-token-0123456789"
REVIEWER = "reviewer-token-0123456789"
OTHER_EDITOR = "other-editor-token-01234"
ADMIN = "admin-token-0123456789ab"
TOKENS = {EDITOR: "editor", REVIEWER: "reviewer", OTHER_EDITOR: "editor", ADMIN: "admin"}

DOC = REFERRAL_DOC


def make_settings(tmp_path: Path, database_url: str | None = None, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "environment": "test",
        "database_url": database_url or f"sqlite:///{tmp_path / 'planwright.db'}",
        "checkpoint_path": tmp_path / "checkpoints.db",
        "tokens": json.dumps(TOKENS),
        "redis_url": None,
        "anthropic_api_key": None,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel([])


@pytest.fixture
def app_client(
    tmp_path: Path, model: ScriptedModel, database_url: str
) -> Iterator[Callable[..., TestClient]]:
    """A factory: ``app_client(**settings_overrides)`` -> a started TestClient.

    Runs once per database backend (SQLite and Postgres): the same suite on both.
    """
    clients: list[TestClient] = []

    def start(**overrides: Any) -> TestClient:
        settings = make_settings(tmp_path, database_url, **overrides)
        models = {"router": model, "planner": model, "job_code": model}
        client = TestClient(create_app(settings, models=models))  # type: ignore[arg-type]
        client.__enter__()
        clients.append(client)
        return client

    yield start
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(app_client: Callable[..., TestClient]) -> TestClient:
    return app_client()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create_workflow(client: TestClient, yaml: str = DOC, token: str = EDITOR) -> dict[str, Any]:
    response = client.post("/v1/workflows", json={"yaml": yaml}, headers=auth(token))
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def create_session(
    client: TestClient, workflow_id: str, token: str = EDITOR, read_only: bool = False
) -> dict[str, Any]:
    response = client.post(
        "/v1/sessions",
        json={"workflow_id": workflow_id, "read_only": read_only},
        headers=auth(token),
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body
