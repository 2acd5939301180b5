"""A plan turn through the service, as a user would: the real app with the offline
model (``service_workflows.offline_service``), a project session, a spec sent with
``"mode": "plan"``, the socket closed mid-review and the pending plan read back over
REST (a reload), a new socket approving it; then everything the build left, read
over REST: the project, the session, every workflow's versions, documents and CLI
``workflow.json`` exports, and the project's Lightning ``project.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession

from tests.external.service_workflows import EDITOR

HEADERS = {"Authorization": f"Bearer {EDITOR}"}
_FRAMES = 2000


@dataclass(frozen=True)
class Planned:
    """What the service did with the spec, read back as a user would."""

    proposal: dict[str, Any]
    """The ``plan.proposed`` frame."""
    reloaded: dict[str, Any]
    """``GET /v1/sessions/{id}`` after the socket closed mid-review."""
    project_in_review: dict[str, Any]
    """``GET /v1/projects/{id}`` mid-review."""
    build: list[dict[str, Any]]
    """Every frame after the approval, up to ``turn.completed``."""
    project: dict[str, Any]
    """``GET /v1/projects/{id}`` after the build."""
    session: dict[str, Any]
    """``GET /v1/sessions/{id}`` after the build."""
    versions: dict[str, list[int]]
    """Workflow id -> its stored version numbers (every workflow of the project)."""
    documents: dict[str, str]
    """Planned workflow key -> its stored YAML."""
    lightning: str
    """The project's Lightning ``project.yaml`` export."""
    cli: dict[str, dict[str, Any]]
    """Planned workflow key -> its CLI ``workflow.json`` export, parsed."""

    @property
    def ids(self) -> dict[str, str]:
        """Planned workflow key -> the id its ``plan.progress`` "built" frame reported."""
        return built_ids(self.build)


def built_ids(frames: list[dict[str, Any]]) -> dict[str, str]:
    return {
        f["workflow_key"]: f["workflow_id"]
        for f in frames
        if f["type"] == "plan.progress" and f["status"] == "built"
    }


def frames_until(ws: WebSocketTestSession, kind: str) -> list[dict[str, Any]]:
    """Frames up to and with the first of ``kind``; an ``error`` frame fails."""
    frames: list[dict[str, Any]] = []
    for _ in range(_FRAMES):
        frame = ws.receive_json()
        frames.append(frame)
        if frame["type"] == "error":
            raise AssertionError(f"the turn failed: {frame}")
        if frame["type"] == kind:
            return frames
    raise AssertionError(f"no {kind} frame in {len(frames)} frames: {frames[-5:]}")


def _get(client: TestClient, path: str, **params: str) -> Any:
    answer = client.get(path, params=params, headers=HEADERS)
    assert answer.status_code == 200, answer.text
    return answer.text if params.get("format") == "lightning" else answer.json()


def plan_and_build(client: TestClient, spec: str, *, project_name: str) -> Planned:
    """Plan ``spec`` in a new empty project, reload mid-review, approve, read back."""
    created = client.post("/v1/projects", json={"name": project_name}, headers=HEADERS)
    assert created.status_code == 201, created.text
    project_id = created.json()["id"]
    assert created.json()["workflows"] == []
    opened = client.post("/v1/sessions", json={"project_id": project_id}, headers=HEADERS)
    assert opened.status_code == 201, opened.text
    assert opened.json()["workflow_id"] is None  # a project session
    session_id = opened.json()["id"]
    url = f"/v1/sessions/{session_id}/ws?token={EDITOR}"

    with client.websocket_connect(url) as ws:
        ws.send_json(
            {"type": "turn", "content": spec, "context": {"page": "workflow"}, "mode": "plan"}
        )
        proposal = frames_until(ws, "plan.proposed")[-1]
    # The socket is gone mid-review: what a reload (any device) reads.
    reloaded = _get(client, f"/v1/sessions/{session_id}")
    project_in_review = _get(client, f"/v1/projects/{project_id}")
    with client.websocket_connect(url) as ws:
        ws.send_json({"type": "confirm", "request_id": proposal["request_id"], "approved": True})
        build = frames_until(ws, "turn.completed")

    project = _get(client, f"/v1/projects/{project_id}")
    by_key = built_ids(build)
    return Planned(
        proposal=proposal,
        reloaded=reloaded,
        project_in_review=project_in_review,
        build=build,
        project=project,
        session=_get(client, f"/v1/sessions/{session_id}"),
        versions={
            w["id"]: [v["version"] for v in _get(client, f"/v1/workflows/{w['id']}/versions")]
            for w in project["workflows"]
        },
        documents={k: _get(client, f"/v1/workflows/{wid}")["yaml"] for k, wid in by_key.items()},
        lightning=_get(client, f"/v1/projects/{project_id}/export", format="lightning"),
        cli={
            k: _get(client, f"/v1/workflows/{wid}/export", format="cli")
            for k, wid in by_key.items()
        },
    )
