"""Test runs through the real app with the real runner: OpenFn's pinned runtime and
adaptors in a node subprocess (installed by ``make test``), on SQLite and Postgres.

A run is stored with the version it ran and read back; the socket's progress frames
come in the order the steps ran; a credential given in ``configuration`` is in no
stored row, response or log line even when the step's code logs it; a step without a
sample fails, lists its request, and "fix it" gets its words; an endless loop is
stopped by the time limit."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from agents.models import ScriptedModel
from app.store.models import metadata
from tests.app.service.helpers import EDITOR, REVIEWER, auth, create_session, create_workflow, until
from tests.fixtures import fixture_text

SECRET = "pw-9f8e7d6c5b4a-secret"
REFERRALS = "https://clinic.example.org/referrals/"

# The triage workflow with a credential on its first step, whose code logs the password
# (the run's output must never show it).
_FETCH = "    body: |\n      get('https://clinic.example.org/referrals/1');\n"
_LOGS_THE_PASSWORD = """\
    credential: clinic
    body: |
      get('https://clinic.example.org/referrals/1');
      fn(state => {
        console.log('signed in with', state.configuration && state.configuration.password);
        return state;
      });
"""
BRANCHING = fixture_text("referral_triage.yaml").replace(_FETCH, _LOGS_THE_PASSWORD, 1)

ENDLESS = """\
name: Spinner
jobs:
  spin:
    name: Spin forever
    adaptor: '@openfn/language-common@latest'
    body: |
      fn(state => { while (true) {} });
"""


def _sample(age: int) -> dict[str, Any]:
    return {"method": "GET", "url": REFERRALS + "*", "body": {"age": age}}


def _run(client: TestClient, workflow_id: str, token: str = EDITOR, **body: Any) -> Any:
    response = client.post(f"/v1/workflows/{workflow_id}/runs", json=body, headers=auth(token))
    assert response.status_code == 201, response.text
    return response.json()


def test_a_run_in_openfn_takes_each_branch_and_is_stored_with_its_version(
    client: TestClient,
) -> None:
    workflow = create_workflow(client, BRANCHING)
    older = _run(client, workflow["id"], REVIEWER, responses=[_sample(70)])
    younger = _run(client, workflow["id"], REVIEWER, responses=[_sample(30)], version=1)

    for run, taken, skipped in ((older, "old", "young"), (younger, "young", "old")):
        assert run["status"] == "succeeded", run
        assert [s["key"] for s in run["steps"]] == ["fetch", taken]
        assert run["final_state"]["data"]["route"] == taken
        fired = {(e["source"], e["target"]): e["fired"] for e in run["edges"]}
        assert fired[("fetch", taken)] is True and fired[("fetch", skipped)] is False
        assert run["requests"] == [
            {
                "step_key": "fetch",
                "method": "GET",
                "url": REFERRALS + "1",
                "status": 200,
                "matched": True,
            }
        ]
        assert (run["version"], run["workflow_id"]) == (1, workflow["id"])
        assert run["runtime"]["@openfn/runtime"]
        got = client.get(f"/v1/runs/{run['run_id']}", headers=auth(EDITOR))
        assert got.status_code == 200 and got.json() == run
    listed = client.get(f"/v1/workflows/{workflow['id']}/runs", headers=auth(REVIEWER)).json()
    assert [r["run_id"] for r in listed["runs"]] == [younger["run_id"], older["run_id"]]


def test_the_socket_streams_each_steps_progress_in_order_then_the_run(
    client: TestClient,
) -> None:
    workflow = create_workflow(client, BRANCHING)
    session = create_session(client, workflow["id"])
    with client.websocket_connect(f"/v1/sessions/{session['id']}/ws?token={EDITOR}") as ws:
        ws.send_json({"type": "run", "responses": [_sample(80)]})
        frames = until(ws, ("run.completed", "error"))
    assert [(f["type"], f.get("step_key"), f.get("status")) for f in frames] == [
        ("run.progress", "fetch", "started"),
        ("run.progress", "fetch", "succeeded"),
        ("run.progress", "old", "started"),
        ("run.progress", "old", "succeeded"),
        ("run.completed", None, None),
    ]
    run = frames[-1]["run"]
    assert {f["run_id"] for f in frames[:-1]} == {run["run_id"]}
    assert [s["key"] for s in run["steps"]] == ["fetch", "old"]
    stored = client.get(f"/v1/workflows/{workflow['id']}/runs", headers=auth(EDITOR)).json()
    assert [r["run_id"] for r in stored["runs"]] == [run["run_id"]]


def _every_stored_value(client: TestClient) -> str:
    engine = client.app.state.services.store.engine  # type: ignore[attr-defined]

    async def dump() -> str:
        parts = []
        async with engine.connect() as conn:
            for table in metadata.sorted_tables:
                rows = (await conn.execute(select(table))).all()
                parts.append(f"{table.name}: {[tuple(r) for r in rows]!r}")
        return "\n".join(parts)

    portal = client.portal
    assert portal is not None
    text: str = portal.call(dump)
    return text


def test_a_credential_the_code_logs_is_in_no_row_response_or_log_line(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    workflow = create_workflow(client, BRANCHING)
    run = _run(
        client,
        workflow["id"],
        responses=[_sample(70)],
        credentials={"clinic": {"baseUrl": "https://clinic.example.org", "password": SECRET}},
    )
    assert run["status"] == "succeeded"
    fetch = run["steps"][0]
    assert any("signed in with ***" in line for line in fetch["logs"]), fetch["logs"]
    texts = [
        str(run),
        client.get(f"/v1/runs/{run['run_id']}", headers=auth(EDITOR)).text,
        _every_stored_value(client),
        *(record.getMessage() for record in caplog.records),
    ]
    assert run["run_id"] in texts[2]
    for text in texts:
        assert SECRET not in text


def test_a_step_without_a_sample_fails_lists_its_request_and_fix_it_has_its_words(
    client: TestClient,
) -> None:
    workflow = create_workflow(client, BRANCHING)
    session = create_session(client, workflow["id"])
    with client.websocket_connect(f"/v1/sessions/{session['id']}/ws?token={EDITOR}") as ws:
        ws.send_json({"type": "run", "input": {"data": {"referral": 1}}})
        frame = ws.receive_json()
        while frame["type"] != "run.completed":
            frame = ws.receive_json()
    run = frame["run"]
    assert run["status"] == "failed"
    assert [(s["key"], s["status"]) for s in run["steps"]] == [("fetch", "failed")]
    assert run["requests"][0]["matched"] is False
    assert run["requests"][0]["url"] == REFERRALS + "1"

    services = client.app.state.services  # type: ignore[attr-defined]
    record = client.portal.call(services.store.get_session, session["id"])  # type: ignore[union-attr]
    words = client.portal.call(services.runs.last_failed_run, record)  # type: ignore[union-attr]
    assert words is not None
    assert "'Fetch referral' (key fetch)" in words
    assert run["steps"][0]["error"][:60] in words
    assert '"referral": 1' in words


def test_an_endless_loop_is_stopped_by_the_time_limit(client: TestClient) -> None:
    workflow = create_workflow(client, ENDLESS)
    run = _run(client, workflow["id"], timeout_s=2)
    assert run["status"] == "timed_out", run
    assert 2000 <= run["duration_ms"] < 10_000
    assert client.get(f"/v1/runs/{run['run_id']}", headers=auth(EDITOR)).json() == run


def test_without_the_installed_runtime_a_run_is_503_and_nothing_is_stored(
    app_client: Any, tmp_path: Any
) -> None:
    client = app_client(run_runtime_dir=tmp_path / "no-runtime-here")
    workflow = create_workflow(client, BRANCHING)
    response = client.post(f"/v1/workflows/{workflow['id']}/runs", json={}, headers=auth(EDITOR))
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "openfn_runtime_unavailable"
    listed = client.get(f"/v1/workflows/{workflow['id']}/runs", headers=auth(EDITOR)).json()
    assert listed == {"runs": []}


def _until(ws: Any, kind: str, limit: int = 60) -> list[dict[str, Any]]:
    frames = []
    for _ in range(limit):
        frames.append(ws.receive_json())
        if frames[-1]["type"] in (kind, "error"):
            return frames
    raise AssertionError(f"no {kind} frame in {frames}")


def test_the_chat_tools_run_streams_in_its_turn_and_is_stored_with_it(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(
        ScriptedModel.tool_calls(("test_run", {"responses": [_sample(30)]})),
        ScriptedModel.text("It took the younger patient branch."),
    )
    workflow = create_workflow(client, BRANCHING)
    session = create_session(client, workflow["id"])
    with client.websocket_connect(f"/v1/sessions/{session['id']}/ws?token={EDITOR}") as ws:
        ws.send_json({"type": "turn", "content": "test it with age 30", "review": False})
        frames = _until(ws, "turn.completed")
    assert frames[-1]["type"] == "turn.completed", frames[-1]
    turn_id = frames[0]["turn_id"]
    progress = [(f["step_key"], f["status"]) for f in frames if f["type"] == "run.progress"]
    assert progress == [
        ("fetch", "started"),
        ("fetch", "succeeded"),
        ("young", "started"),
        ("young", "succeeded"),
    ]
    (completed,) = [f for f in frames if f["type"] == "run.completed"]
    assert all(f["turn_id"] == turn_id for f in frames if f["type"].startswith("run."))
    run = completed["run"]
    assert (run["status"], run["version"], run["draft"]) == ("succeeded", 1, False)
    services = client.app.state.services  # type: ignore[attr-defined]
    assert client.portal is not None
    stored = client.portal.call(services.store.get_test_run, run["run_id"])
    assert (stored.turn_id, stored.session_id) == (turn_id, session["id"])
    # The planner was told what happened.
    results = [
        block
        for message in model.requests[-1].messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert any("succeeded" in str(block.get("content")) for block in results)


def test_fix_it_hands_the_planner_the_sessions_failed_run(
    client: TestClient, model: ScriptedModel
) -> None:
    model.push(ScriptedModel.text("The fetch step had no answer; add a sample or a check."))
    workflow = create_workflow(client, BRANCHING)
    session = create_session(client, workflow["id"])
    with client.websocket_connect(f"/v1/sessions/{session['id']}/ws?token={EDITOR}") as ws:
        ws.send_json({"type": "run", "input": {"data": {"referral": 7}}})
        run = _until(ws, "run.completed")[-1]["run"]
        assert run["status"] == "failed"
        ws.send_json({"type": "turn", "content": "fix it", "review": False})
        frames = _until(ws, "turn.completed")
    assert frames[-1]["type"] == "turn.completed", frames[-1]
    sent = "\n".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert "'Fetch referral' (key fetch)" in sent and '"referral": 7' in sent
