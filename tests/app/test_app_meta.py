from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.main import create_app
from app.settings import Settings
from tests.agents.offline.documents import CHAIN_YAML
from tests.app.service.helpers import (
    connect,
    create_session,
    create_workflow,
    make_settings,
    turn,
    until,
)
from tools.document.cron import MAX_EXPRESSION_CHARS


def test_health_reports_offline_model_without_a_key(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path, tokens=None))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "model": "offline"}


def test_single_user_mode_answers_only_to_loopback_names(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path, tokens=None))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/healthz").status_code == 200
        rebound = client.get("/v1/workflows", headers={"host": "evil.example.com"})
        assert rebound.status_code == 400
        wid = client.post("/v1/workflows", json={"name": "W"}).json()["id"]
        session = client.post("/v1/sessions", json={"workflow_id": wid}).json()["id"]
        url = f"ws://127.0.0.1:8000/v1/sessions/{session}/ws"
        with client.websocket_connect(url, headers={"origin": "http://127.0.0.1:8000"}) as ws:
            ws.send_json({"type": "cancel"})
            assert ws.receive_json()["code"] == "no_turn"
        with (
            pytest.raises(WebSocketDisconnect) as refused,
            client.websocket_connect(url, headers={"origin": "https://evil.example.com"}),
        ):
            pass
        assert refused.value.code == 1008
        with (  # same host name, another port: another site
            pytest.raises(WebSocketDisconnect) as refused,
            client.websocket_connect(url, headers={"origin": "http://127.0.0.1:5173"}),
        ):
            pass
        assert refused.value.code == 1008


def test_tool_definitions_respect_read_only(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path))) as client:
        everything = {t["name"] for t in client.get("/v1/tools").json()}
        read_only = {t["name"] for t in client.get("/v1/tools?read_only=true").json()}
    assert "add_jobs" in everything
    # Reading, a change previewed on a copy and a test run: none of them changes anything.
    assert read_only == {"inspect_job_code", "search_documentation", "preview_change", "test_run"}


def test_settings_keep_secrets_secret() -> None:
    settings = Settings(
        anthropic_api_key="sk-ant-very-secret", tokens='{"tok-very-secret-123": "editor"}'
    )
    assert "sk-ant-very-secret" not in repr(settings)
    assert "tok-very-secret-123" not in repr(settings)
    assert settings.uses_anthropic


def test_no_tokens_means_loopback_only() -> None:
    with pytest.raises(ValueError, match="without PLANWRIGHT_TOKENS"):
        Settings(host="0.0.0.0", tokens=None)
    assert Settings(host="0.0.0.0", tokens='{"t": "editor"}').host == "0.0.0.0"
    with pytest.raises(ValueError, match="production needs"):
        Settings(environment="production", tokens=None)


def test_the_service_shortens_the_gil_switch_interval_for_its_loop(tmp_path: Path) -> None:
    from app.main import SWITCH_INTERVAL_S

    before = sys.getswitchinterval()
    try:
        settings = Settings(
            environment="test",
            database_url=f"sqlite:///{tmp_path / 'db.sqlite'}",
            checkpoint_path=tmp_path / "cp.db",
            redis_url=None,
            anthropic_api_key=None,
        )
        with TestClient(create_app(settings)):
            assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)
    finally:
        sys.setswitchinterval(before)


def test_cron_next_runs_count_from_the_store_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    friday = datetime(2026, 12, 4, 15, 30, tzinfo=UTC)
    with TestClient(create_app(make_settings(tmp_path))) as client:
        monkeypatch.setattr(client.app.state.services.store, "_now", lambda: friday)  # type: ignore[attr-defined]
        answer = client.get("/v1/cron/next-runs", params={"expr": "0 7 * * 1-5", "count": 2})
        assert answer.status_code == 200
        assert answer.json() == {
            "expr": "0 7 * * 1-5",
            "runs": ["2026-12-07T07:00:00+00:00", "2026-12-08T07:00:00+00:00"],
            "text": "Mon 7 Dec 07:00 and Tue 8 Dec 07:00 UTC",
        }
        wrong = client.get("/v1/cron/next-runs", params={"expr": "0 7 * *"})
        assert wrong.status_code == 422
        assert wrong.json()["error"]["code"] == "invalid_cron"
        assert "5 fields" in wrong.json()["error"]["message"]
        assert (
            client.get("/v1/cron/next-runs", params={"expr": "* * * * *", "count": 0}).status_code
            == 422
        )


def test_a_long_cron_expression_is_read_and_an_overlong_one_is_invalid_cron(
    tmp_path: Path,
) -> None:
    """Every minute and hour listed is a valid 5-field expression of ~150 characters
    more than the old query bound took; past the cron module's own bound the answer is
    the documented ``invalid_cron``, not the query model's ``invalid_request``."""
    every = ",".join(str(m) for m in range(60)) + " " + ",".join(str(h) for h in range(24))
    long_valid = every + " " + ",".join(str(d) for d in range(1, 32)) + " * *"
    assert len(long_valid) > 300
    with TestClient(create_app(make_settings(tmp_path))) as client:
        answer = client.get("/v1/cron/next-runs", params={"expr": long_valid, "count": 1})
        assert answer.status_code == 200, answer.text
        overlong = ",".join(["5"] * (MAX_EXPRESSION_CHARS // 2)) + " * * * *"
        refused = client.get("/v1/cron/next-runs", params={"expr": overlong})
        assert refused.status_code == 422
        assert refused.json()["error"]["code"] == "invalid_cron"
        assert str(MAX_EXPRESSION_CHARS) in refused.json()["error"]["message"]


def test_a_turns_describe_answer_counts_next_runs_from_the_store_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    friday = datetime(2026, 12, 4, 15, 30, tzinfo=UTC)
    with TestClient(create_app(make_settings(tmp_path))) as client:
        monkeypatch.setattr(client.app.state.services.store, "_now", lambda: friday)  # type: ignore[attr-defined]
        session = create_session(client, create_workflow(client, CHAIN_YAML)["id"])
        with connect(client, session["id"]) as ws:
            ws.send_json(turn("what does this workflow do?"))
            frames = until(ws, "turn.completed")
    answer = next(f["text"] for f in frames if f["type"] == "message")
    assert "Next runs: Sat 5 Dec 09:00, Sun 6 Dec 09:00 and Mon 7 Dec 09:00 UTC." in answer
