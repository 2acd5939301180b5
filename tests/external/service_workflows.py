"""Workflows built through the service, as a user would: the real app (SQLite,
in-process bus, the offline model: no API key), REST to create, the chat
WebSocket to describe the workflow and ask for code, REST to read the result
and to export it as a CLI ``workflow.json`` (``GET /v1/workflows/{id}/export?format=cli``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings

EDITOR = "runtime-editor-token-0123456789"
_HEADERS = {"Authorization": f"Bearer {EDITOR}"}
_FRAMES_PER_TURN = 400


@contextmanager
def offline_service(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(
        environment="test",
        database_url=f"sqlite:///{tmp_path / 'planwright.db'}",
        checkpoint_path=tmp_path / "checkpoints.db",
        tokens=json.dumps({EDITOR: "editor"}),
        redis_url=None,
        anthropic_api_key=None,
    )
    with TestClient(create_app(settings)) as client:
        yield client


def build_workflow(client: TestClient, turns: list[str]) -> dict[str, Any]:
    """Create an empty workflow, send ``turns`` in one chat session; return
    ``{id, yaml, plan, replies, questions}``: the stored document after the last turn,
    its CLI workflow.json export, parsed, and the confirmations asked (each approved)."""
    created = client.post("/v1/workflows", json={"name": "New workflow"}, headers=_HEADERS)
    assert created.status_code == 201, created.text
    workflow_id = created.json()["id"]
    session = client.post(
        "/v1/sessions", json={"workflow_id": workflow_id, "read_only": False}, headers=_HEADERS
    )
    assert session.status_code == 201, session.text
    replies: list[str] = []
    questions: list[str] = []
    url = f"/v1/sessions/{session.json()['id']}/ws?token={EDITOR}"
    with client.websocket_connect(url) as ws:
        for content in turns:
            ws.send_json({"type": "turn", "content": content, "context": {"page": "workflow"}})
            for _ in range(_FRAMES_PER_TURN):
                frame = ws.receive_json()
                if frame["type"] == "message":
                    replies.append(frame["text"])
                if frame["type"] == "error":
                    raise AssertionError(f"turn {content!r} failed: {frame}")
                if frame["type"] == "confirm.required":
                    # The service asks before a change with impact (a trigger's type changed,
                    # a step removed); the user building the workflow meant it.
                    questions.append(frame["question"])
                    ws.send_json(
                        {"type": "confirm", "request_id": frame["request_id"], "approved": True}
                    )
                if frame["type"] == "turn.completed":
                    break
            else:
                raise AssertionError(f"turn {content!r} did not complete")
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=_HEADERS)
    assert stored.status_code == 200, stored.text
    exported = client.get(
        f"/v1/workflows/{workflow_id}/export", params={"format": "cli"}, headers=_HEADERS
    )
    assert exported.status_code == 200, exported.text
    return {
        "id": workflow_id,
        "yaml": stored.json()["yaml"],
        "plan": json.loads(exported.text),
        "replies": replies,
        "questions": questions,
    }
