"""In-process service tests: the real app over SQLite and the in-process bus,
with scripted models."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models import ScriptedModel
from app.main import create_app
from tests.app.service.helpers import make_settings


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
