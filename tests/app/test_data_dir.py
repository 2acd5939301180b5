"""Run data lives in one directory from the settings: started on the default paths in an
empty working directory, the service writes nothing outside ``.data`` (so ``make serve``
leaves nothing untracked in the checkout), and one setting moves all of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models import ScriptedModel
from app.main import create_app
from app.settings import Settings
from tests.documents import REFERRAL_DOC

S = ScriptedModel
TOKEN = "editor-token-0123456789"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
_PATH_VARIABLES = (
    "DATABASE_URL",
    "PLANWRIGHT_DATABASE_URL",
    "PLANWRIGHT_DATA_DIR",
    "PLANWRIGHT_CHECKPOINT_PATH",
)


@pytest.fixture
def default_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty working directory and no path set in the environment."""
    for name in _PATH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _settings(**values: Any) -> Settings:
    return Settings(
        environment="test",
        tokens=json.dumps({TOKEN: "editor"}),
        redis_url=None,
        anthropic_api_key=None,
        **values,
    )


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _pause_a_turn(client: TestClient) -> None:
    """A turn that stops on a confirmation: its checkpoint is written and kept."""
    workflow = client.post("/v1/workflows", json={"yaml": REFERRAL_DOC}, headers=HEADERS)
    assert workflow.status_code == 201, workflow.text
    session = client.post(
        "/v1/sessions", json={"workflow_id": workflow.json()["id"]}, headers=HEADERS
    )
    assert session.status_code == 201, session.text
    with client.websocket_connect(f"/v1/sessions/{session.json()['id']}/ws?token={TOKEN}") as ws:
        ws.send_json(
            {"type": "turn", "content": "remove the fetch step", "context": {"page": "workflow"}}
        )
        kinds = []
        for _ in range(50):
            kinds.append(ws.receive_json()["type"])
            if kinds[-1] == "confirm.required":
                return
    raise AssertionError(f"the turn did not pause: {kinds}")


def test_on_the_default_paths_the_service_writes_only_in_its_data_dir(
    default_paths: Path,
) -> None:
    settings = _settings()
    assert settings.data_dir == Path(".data")
    model = S([S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Removed Fetch.")])
    models = {"router": model, "planner": model, "job_code": model}
    with TestClient(create_app(settings, models=models)) as client:  # type: ignore[arg-type]
        _pause_a_turn(client)
        while_running = _files(default_paths)
    after = _files(default_paths)
    # Both databases, and SQLite's write-ahead logs while they are open.
    assert {".data/planwright.db", ".data/checkpoints.db"} <= while_running
    assert any(name.endswith("-wal") for name in while_running)
    outside = {name for name in while_running | after if not name.startswith(".data/")}
    assert outside == set()


def test_one_setting_moves_the_database_and_the_checkpoints(
    default_paths: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANWRIGHT_DATA_DIR", str(default_paths / "state"))
    settings = _settings()
    assert settings.database_url == f"sqlite:///{default_paths / 'state' / 'planwright.db'}"
    assert settings.checkpoint_path == default_paths / "state" / "checkpoints.db"
    with TestClient(create_app(settings)):
        pass
    assert _files(default_paths) >= {"state/planwright.db", "state/checkpoints.db"}
    assert all(name.startswith("state/") for name in _files(default_paths))


def test_a_database_url_or_checkpoint_path_given_outright_wins(default_paths: Path) -> None:
    settings = _settings(
        data_dir=default_paths / "state",
        database_url="postgresql://db.example/planwright",
        checkpoint_path=default_paths / "paused.db",
    )
    assert settings.database_url == "postgresql://db.example/planwright"
    assert settings.checkpoint_path == default_paths / "paused.db"
