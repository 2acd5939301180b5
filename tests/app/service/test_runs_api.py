"""Test runs through the real app (SQLite and Postgres): REST and the chat socket's ``run``
frame, with a fake runner standing in for OpenFn's runtime (the real one runs in
``test_runs_openfn.py``). What is checked here is the service's side: versions, who may
run and read, error shapes, busy sockets, and credentials kept out of every row."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from agents.events import RunProgressEvent
from agents.testrun import (
    LocalRunner,
    OpenFnRuntimeUnavailable,
    ProgressCallback,
    RunLimits,
    ensure_installed,
)
from app.store.models import metadata
from tests.app.service.helpers import DOC, EDITOR, REVIEWER, auth, create_session, create_workflow
from tools.document import WorkflowDocument
from tools.testrun import RunRequest, StepRun, TestRun

SECRET = "s3cr3t-pa55word-0042"


class GatedRunner:
    """Reports one step per job key it is told; waits for ``release`` when ``hold`` is set
    (a thread event: the app runs on the TestClient's own loop and thread)."""

    def __init__(self, keys: tuple[str, ...] = ("check", "notify")) -> None:
        self.keys = keys
        self.hold = False
        self.release = threading.Event()
        self.started = threading.Event()
        self.calls: list[tuple[str, RunRequest]] = []

    async def run(
        self,
        workflow: WorkflowDocument,
        request: RunRequest,
        *,
        run_id: str,
        on_progress: ProgressCallback | None = None,
        **_: Any,
    ) -> TestRun:
        self.calls.append((workflow.to_yaml(), request))
        self.started.set()
        while self.hold and not self.release.is_set():
            await asyncio.sleep(0.01)
        steps = []
        for key in self.keys:
            if on_progress is not None:
                await on_progress(RunProgressEvent(run_id=run_id, step_key=key, status="started"))
                await on_progress(RunProgressEvent(run_id=run_id, step_key=key, status="succeeded"))
            config = request.configuration or {}
            steps.append(
                StepRun(
                    key=key,
                    name=key.title(),
                    status="succeeded",
                    duration_ms=1,
                    input={**request.input, "configuration": config},
                    logs=[f"using {config.get('password')}"],
                )
            )
        return TestRun(run_id=run_id, status="succeeded", steps=steps, final_state=request.input)


def _runner(client: TestClient, runner: Any) -> None:
    client.app.state.services.runs.runner = runner  # type: ignore[attr-defined]


def _run(client: TestClient, workflow_id: str, token: str = EDITOR, **body: Any) -> Any:
    return client.post(f"/v1/workflows/{workflow_id}/runs", json=body, headers=auth(token))


def test_a_reviewer_runs_a_version_and_reads_it_back(client: TestClient) -> None:
    runner = GatedRunner()
    _runner(client, runner)
    workflow = create_workflow(client)
    changed = DOC.replace("Referral intake", "Referral intake v2", 1)
    assert changed != DOC
    put = client.put(
        f"/v1/workflows/{workflow['id']}",
        json={"yaml": changed, "expected_version": 1},
        headers=auth(EDITOR),
    )
    assert put.status_code == 200, put.text

    first = _run(client, workflow["id"], REVIEWER, version=1, input={"data": {"age": 70}})
    assert first.status_code == 201, first.text
    second = _run(client, workflow["id"], REVIEWER)
    assert second.status_code == 201
    run, latest = first.json(), second.json()
    assert runner.calls[0][0] == DOC and runner.calls[1][0] == put.json()["yaml"]
    assert (run["version"], latest["version"]) == (1, 2)
    assert run["workflow_id"] == workflow["id"] and run["created_by"]
    assert run["steps"][0]["input"] == {"data": {"age": 70}}

    got = client.get(f"/v1/runs/{run['run_id']}", headers=auth(EDITOR))
    assert got.status_code == 200 and got.json() == run
    listed = client.get(f"/v1/workflows/{workflow['id']}/runs", headers=auth(REVIEWER))
    assert [r["run_id"] for r in listed.json()["runs"]] == [latest["run_id"], run["run_id"]]
    one = client.get(f"/v1/workflows/{workflow['id']}/runs?limit=1", headers=auth(REVIEWER))
    assert [r["run_id"] for r in one.json()["runs"]] == [latest["run_id"]]


def test_bad_bodies_unknown_things_and_no_token_get_the_error_shape(client: TestClient) -> None:
    _runner(client, GatedRunner())
    workflow_id = create_workflow(client)["id"]
    bad_bodies: list[Any] = [
        {"version": "1"},
        {"version": True},
        {"version": 0},
        {"timeout_s": 0},
        {"timeout_s": -1},
        {"input": []},
        {"responses": [{"method": "GE T", "url": "http://x"}]},
        {"responses": [{"url": "http://x", "status": 99}]},
        {"extra": 1},
        {"input": {"data": {"x": "\ud800"}}},
    ]
    for body in bad_bodies:
        response = client.post(
            f"/v1/workflows/{workflow_id}/runs",
            content=json.dumps(body).encode(),
            headers={**auth(EDITOR), "content-type": "application/json"},
        )
        assert response.status_code == 422, (body, response.text)
        assert response.json()["error"]["code"] == "invalid_request"
    missing = _run(client, workflow_id, version=9)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert _run(client, "no-such-workflow").status_code == 404
    assert client.get("/v1/runs/no-such-run", headers=auth(EDITOR)).status_code == 404
    assert client.get("/v1/workflows/nope/runs", headers=auth(EDITOR)).status_code == 404
    assert client.post(f"/v1/workflows/{workflow_id}/runs", json={}).status_code == 401
    assert client.get("/v1/runs/x").status_code == 401
    empty = client.post(f"/v1/workflows/{workflow_id}/runs", headers=auth(EDITOR))
    assert empty.status_code == 201  # no body at all: the defaults


def test_a_timeout_over_the_servers_limit_is_refused(app_client: Any) -> None:
    client = app_client(run_max_timeout_s=30, run_timeout_s=10)
    runner = GatedRunner()
    _runner(client, runner)
    workflow_id = create_workflow(client)["id"]
    refused = _run(client, workflow_id, timeout_s=60)
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "timeout_too_long"
    assert _run(client, workflow_id).status_code == 201
    assert runner.calls[-1][1].timeout_s == 10


@pytest.mark.parametrize("timeout_s", [120.5, 500, 1000, 1e308])
def test_a_timeout_over_the_default_limit_is_timeout_too_long_on_rest_and_socket(
    client: TestClient, timeout_s: float
) -> None:
    """The documented code, not the body model's own bound as invalid_request; nothing
    runs."""
    runner = GatedRunner()
    _runner(client, runner)
    workflow_id = create_workflow(client)["id"]
    refused = _run(client, workflow_id, timeout_s=timeout_s)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "timeout_too_long"
    assert "120" in refused.json()["error"]["message"]
    session_id = create_session(client, workflow_id)["id"]
    with _connect(client, session_id) as ws:
        ws.send_json({"type": "run", "timeout_s": timeout_s})
        frame = ws.receive_json()
        assert (frame["type"], frame["code"]) == ("error", "timeout_too_long"), frame
        ws.send_json({"type": "run", "timeout_s": 120})  # the limit itself is allowed
        assert ws.receive_json()["type"] == "run.progress"
    assert [request.timeout_s for _, request in runner.calls] == [120]


def test_without_the_runtime_a_run_is_503_openfn_runtime_unavailable(client: TestClient) -> None:
    class UnavailableRunner(GatedRunner):
        async def run(self, *args: Any, **kwargs: Any) -> TestRun:
            raise OpenFnRuntimeUnavailable("node is not installed here")

    _runner(client, UnavailableRunner())
    workflow_id = create_workflow(client)["id"]
    response = _run(client, workflow_id)
    assert response.status_code == 503
    assert response.json() == {
        "error": {"code": "openfn_runtime_unavailable", "message": "node is not installed here"}
    }
    listed = client.get(f"/v1/workflows/{workflow_id}/runs", headers=auth(EDITOR))
    assert listed.json() == {"runs": []}


def test_a_node_that_cannot_confine_a_run_is_503_and_runs_nothing(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real runner on a node without a permission model (Node 18: the flags are bad
    options): the run is refused as the runtime's lack, node never runs the workflow,
    nothing is stored."""
    runtime = ensure_installed()
    real = shutil.which("node")
    assert real is not None
    fake_bin = tmp_path / "node18"
    fake_bin.mkdir()
    fake = fake_bin / "node"
    fake.write_text(
        f'#!/bin/sh\necho "$*" >> "{fake_bin}/calls"\n'
        'for a; do case "$a" in --permission|--experimental-permission)'
        ' echo "node: bad option: $a" >&2; exit 9;; esac; done\n'
        f'exec {real} "$@"\n',
        encoding="utf-8",
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    _runner(client, LocalRunner(RunLimits(timeout_s=20), runtime))
    workflow_id = create_workflow(client)["id"]

    response = _run(client, workflow_id)

    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "openfn_runtime_unavailable"
    assert "no working permission model" in error["message"]
    calls = (fake_bin / "calls").read_text(encoding="utf-8").splitlines()
    assert calls and all("run.mjs" not in call for call in calls)
    listed = client.get(f"/v1/workflows/{workflow_id}/runs", headers=auth(EDITOR))
    assert listed.json() == {"runs": []}


def _every_stored_value(client: TestClient) -> str:
    """Every row of every table, as text (the same on SQLite and Postgres)."""
    engine = client.app.state.services.store.engine  # type: ignore[attr-defined]

    async def dump() -> str:
        parts = []
        async with engine.connect() as conn:
            for table in metadata.sorted_tables:
                rows = (await conn.execute(select(table))).all()
                parts.append(f"{table.name}: {[tuple(r) for r in rows]!r}")
        return "\n".join(parts)

    portal = client.portal  # the app's own loop and thread (the engine is bound to it)
    assert portal is not None
    text: str = portal.call(dump)
    return text


def test_a_secret_in_configuration_is_in_no_row_response_frame_or_log(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    runner = GatedRunner()
    _runner(client, runner)
    workflow_id = create_workflow(client)["id"]
    session_id = create_session(client, workflow_id)["id"]
    response = _run(client, workflow_id, configuration={"password": SECRET, "user": "ana"})
    assert response.status_code == 201
    assert runner.calls[0][1].configuration == {"password": SECRET, "user": "ana"}
    with client.websocket_connect(f"/v1/sessions/{session_id}/ws?token={EDITOR}") as ws:
        # The run frame carries no configuration at all: the contract has none for it.
        ws.send_json({"type": "run", "configuration": {"password": SECRET}})
        assert ws.receive_json()["code"] == "invalid_frame"
    run_id = response.json()["run_id"]
    texts = [
        response.text,
        client.get(f"/v1/runs/{run_id}", headers=auth(EDITOR)).text,
        client.get(f"/v1/workflows/{workflow_id}/runs", headers=auth(EDITOR)).text,
        _every_stored_value(client),
        *(record.getMessage() for record in caplog.records),
    ]
    assert run_id in texts[3]  # the run is stored
    for text in texts:
        assert SECRET not in text
    assert response.json()["steps"][0]["logs"] == ["using ***"]


def _connect(client: TestClient, session_id: str, token: str = EDITOR) -> Any:
    return client.websocket_connect(f"/v1/sessions/{session_id}/ws?token={token}")


def test_the_run_frame_streams_progress_then_the_run(client: TestClient) -> None:
    _runner(client, GatedRunner())
    workflow_id = create_workflow(client)["id"]
    session_id = create_session(client, workflow_id, token=REVIEWER)["id"]
    with _connect(client, session_id, REVIEWER) as ws:
        ws.send_json({"type": "run", "input": {"data": {"age": 3}}})
        frames = [ws.receive_json() for _ in range(5)]
    assert [(f["type"], f.get("step_key"), f.get("status")) for f in frames] == [
        ("run.progress", "check", "started"),
        ("run.progress", "check", "succeeded"),
        ("run.progress", "notify", "started"),
        ("run.progress", "notify", "succeeded"),
        ("run.completed", None, None),
    ]
    seqs = [f["seq"] for f in frames]
    assert seqs == sorted(seqs)
    run = frames[-1]["run"]
    assert {f["run_id"] for f in frames[:4]} == {run["run_id"]}
    assert run["version"] == 1 and run["steps"][0]["input"] == {"data": {"age": 3}}
    stored = client.get(f"/v1/runs/{run['run_id']}", headers=auth(EDITOR)).json()
    assert TestRun.model_validate(stored) == TestRun.model_validate(run)  # frames drop nulls


def test_a_second_run_or_a_turn_while_one_runs_is_busy_and_the_socket_stays(
    client: TestClient,
) -> None:
    runner = GatedRunner(keys=("check",))
    runner.hold = True
    _runner(client, runner)
    workflow_id = create_workflow(client)["id"]
    session_id = create_session(client, workflow_id)["id"]
    with _connect(client, session_id) as ws:
        ws.send_json({"type": "run"})
        assert runner.started.wait(10)
        ws.send_json({"type": "run"})
        assert ws.receive_json()["code"] == "busy"
        ws.send_json({"type": "turn", "content": "rename check", "context": {"page": "workflow"}})
        assert ws.receive_json()["code"] == "busy"
        runner.release.set()
        kinds = [ws.receive_json()["type"] for _ in range(3)]
        assert kinds == ["run.progress", "run.progress", "run.completed"]
        ws.send_json({"type": "run", "version": 5})  # an error frame; the socket stays
        error = ws.receive_json()
        assert (error["type"], error["code"]) == ("error", "not_found")
        ws.send_json({"type": "run"})
        assert [ws.receive_json()["type"] for _ in range(3)][-1] == "run.completed"
    assert len(runner.calls) == 2


def test_a_cancel_stops_a_run_and_nothing_is_stored(client: TestClient) -> None:
    runner = GatedRunner(keys=("check",))
    runner.hold = True
    _runner(client, runner)
    workflow_id = create_workflow(client)["id"]
    session_id = create_session(client, workflow_id)["id"]
    with _connect(client, session_id) as ws:
        ws.send_json({"type": "run"})
        assert runner.started.wait(10)
        ws.send_json({"type": "cancel"})
        frame = ws.receive_json()
        assert (frame["type"], frame["code"]) == ("error", "cancelled")
    listed = client.get(f"/v1/workflows/{workflow_id}/runs", headers=auth(EDITOR))
    assert listed.json() == {"runs": []}


def test_a_project_session_has_no_workflow_to_run(client: TestClient) -> None:
    _runner(client, GatedRunner())
    project = client.post("/v1/projects", json={"name": "P"}, headers=auth(EDITOR)).json()
    session = client.post(
        "/v1/sessions", json={"project_id": project["id"]}, headers=auth(EDITOR)
    ).json()
    with _connect(client, session["id"]) as ws:
        ws.send_json({"type": "run"})
        frame = ws.receive_json()
    assert (frame["type"], frame["code"]) == ("error", "project_session")
