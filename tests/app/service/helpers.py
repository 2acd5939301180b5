"""Helpers the in-process service tests share: tokens, settings, REST set-up and the chat
WebSocket's frames."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession

from app.settings import Settings
from tests.documents import REFERRAL_DOC
from tests.fixtures import fixture_text

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


def connect(client: TestClient, session_id: str, token: str = EDITOR) -> Any:
    return client.websocket_connect(f"/v1/sessions/{session_id}/ws?token={token}")


def until(
    ws: WebSocketTestSession, kind: str | tuple[str, ...], limit: int = 50
) -> list[dict[str, Any]]:
    """Frames up to and including the first of type ``kind`` (or any of the ``kind``s);
    fails after ``limit`` frames without one."""
    kinds = (kind,) if isinstance(kind, str) else kind
    frames = []
    for _ in range(limit):
        frame = ws.receive_json()
        frames.append(frame)
        if frame["type"] in kinds:
            return frames
    raise AssertionError(f"no {' or '.join(kinds)} frame in {frames}")


def turn(content: str, **context: Any) -> dict[str, Any]:
    return {"type": "turn", "content": content, "context": {"page": "workflow", **context}}


def setup(client: TestClient, token: str = EDITOR, read_only: bool = False) -> tuple[str, str]:
    workflow = create_workflow(client)
    session = create_session(client, workflow["id"], token=token, read_only=read_only)
    return workflow["id"], session["id"]


def checkpoint_rows(database_url: str, tmp_path: Path) -> int:
    """Rows in every checkpoint table of the backend the service uses."""
    if database_url.startswith("sqlite"):
        with sqlite3.connect(tmp_path / "checkpoints.db") as db:
            return sum(
                db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("checkpoints", "writes")
            )
    with psycopg.connect(database_url) as db:
        return sum(
            db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # type: ignore[index]
            for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs")
        )


def watch(
    client: TestClient, workflow_id: str, token: str = REVIEWER, since: int | None = None
) -> Any:
    query = f"?token={token}" + (f"&since_version={since}" if since is not None else "")
    return client.websocket_connect(f"/v1/workflows/{workflow_id}/watch{query}")


# A spec with four processes, as pasted into plan mode, and the workflows it plans.
SPEC = fixture_text("referral_spec.md")
NAMES = ["Intake", "Coverage check", "Document verification", "Status report"]


# A Lightning project.yaml with two workflows (webhook and cron with a cursor step).
TWO_WORKFLOWS = fixture_text("two_workflows.lightning.yaml")
