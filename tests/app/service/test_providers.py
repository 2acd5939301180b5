"""PLANWRIGHT_PROVIDER end to end: the service builds Claude on Bedrock or Vertex AI from
its settings alone, and a chat turn runs against the strict fake answering as that
platform, priced like the Claude API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.app.service.helpers import EDITOR, auth, connect, make_settings, setup, turn, until
from tests.fakes.anthropic_server import text_reply, tool_reply
from tests.fakes.platforms import FakeCloudServer


@pytest.fixture
def cloud() -> Iterator[FakeCloudServer]:
    with FakeCloudServer() as server:
        yield server


def _provider_settings(
    provider: str, cloud: FakeCloudServer, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    if provider == "bedrock":
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", cloud.aws_access_key)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", cloud.aws_secret_key)
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"):
            monkeypatch.delenv(name, raising=False)
        return {"cloud_region": cloud.aws_region, "cloud_base_url": cloud.base_url}
    return {
        "cloud_region": cloud.vertex_region,
        "vertex_project_id": cloud.vertex_project,
        "vertex_access_token": cloud.vertex_token,
        "cloud_base_url": cloud.vertex_base_url,
    }


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
def test_a_turn_runs_on_the_configured_provider(
    provider: str,
    cloud: FakeCloudServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    database_url: str,
) -> None:
    settings = make_settings(
        tmp_path,
        database_url,
        provider=provider,
        model_max_retries=0,
        **_provider_settings(provider, cloud, monkeypatch),
    )
    assert settings.anthropic_api_key is None and settings.uses_anthropic
    cloud.queue(tool_reply(("update_workflow", {"name": "Intake"})), text_reply("Renamed it."))
    with TestClient(create_app(settings)) as client:
        workflow_id, session_id = setup(client)
        with connect(client, session_id) as ws:
            ws.send_json(turn("rename the workflow to Intake"))
            done = until(ws, "turn.completed")[-1]
        stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
        detail = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert stored["name"] == "Intake"
    assert cloud.rejected == [] and cloud.errors == [] and cloud.pending == 0
    paths = {r.path for r in cloud.requests}
    expected = (
        "/model/anthropic.claude-opus-4-5-20251101-v1:0/invoke-with-response-stream"
        if provider == "bedrock"
        else f"/v1/projects/{cloud.vertex_project}/locations/{cloud.vertex_region}"
        "/publishers/anthropic/models/claude-opus-4-5@20251101:streamRawPredict"
    )
    assert paths == {expected}
    assert done["usage"]["cost_usd"] > 0  # priced from the one table
    calls = detail["turns"][0]["usage"]["calls"]
    assert calls[1]["cache_read_input_tokens"] > 0  # the same cache breakpoints


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
def test_the_history_of_a_second_turn_is_counted_where_the_provider_counts(
    provider: str,
    cloud: FakeCloudServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    database_url: str,
) -> None:
    """The service counts a follow-up's history with Vertex's counting endpoint, and on
    Bedrock (which has none) locally: nothing but model calls reaches Bedrock."""
    from tests.fakes.platforms import VERTEX_VERSION

    settings = make_settings(
        tmp_path,
        database_url,
        provider=provider,
        model_max_retries=0,
        **_provider_settings(provider, cloud, monkeypatch),
    )
    cloud.queue(text_reply("A webhook starts it."), text_reply("Then it checks coverage."))
    with TestClient(create_app(settings)) as client:
        _, session_id = setup(client)
        with connect(client, session_id) as ws:
            ws.send_json(turn("what starts this workflow?"))
            until(ws, "turn.completed")
            ws.send_json(turn("and what happens next?"))
            until(ws, "turn.completed")
    assert cloud.rejected == [] and cloud.errors == [] and cloud.pending == 0
    follow_up = cloud.requests[-1]
    assert [m["role"] for m in follow_up.json["messages"]][:2] == ["user", "assistant"]
    counted = cloud.count_tokens_requests
    if provider == "bedrock":
        assert counted == []
        return
    assert counted  # the history was counted by Vertex
    for request in counted:
        assert request.path.endswith("/publishers/anthropic/models/count-tokens:rawPredict")
        assert request.json["anthropic_version"] == VERTEX_VERSION
        assert request.json["model"] == "claude-opus-4-5@20251101"
    assert {"what starts this workflow?", "A webhook starts it."} <= {
        r.json["messages"][0]["content"] for r in counted
    }
