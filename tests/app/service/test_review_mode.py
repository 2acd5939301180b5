"""Review mode through the real service (SQLite and Postgres): nothing lands until it
is accepted; all, some or none; dependent and stale answers; a restart in between."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession

from agents.events import RunProgressEvent
from agents.models import ScriptedModel
from agents.testrun import ProgressCallback
from tests.app.service.helpers import DOC, EDITOR, OTHER_EDITOR, auth, create_workflow
from tests.waiting import wait_until
from tools.document import WorkflowDocument
from tools.jobcode.stitch import stitch_job_code
from tools.registry import run_tool
from tools.testrun import RunRequest, StepRun, TestRun

S = ScriptedModel


def _script(model: ScriptedModel) -> None:
    model.push(
        S.tool_calls(("add_jobs", {"jobs": [{"name": "Notify clinic", "adaptor": "gmail"}]})),
        S.tool_calls(("add_edges", {"edges": [{"source": "check", "target": "notify-clinic"}]})),
        S.text("Added Notify clinic after Check coverage."),
    )


def _review_session(client: TestClient) -> tuple[str, str]:
    workflow = create_workflow(client)
    response = client.post(
        "/v1/sessions",
        json={"workflow_id": workflow["id"], "read_only": False, "review": True},
        headers=auth(EDITOR),
    )
    assert response.status_code == 201, response.text
    assert response.json()["review"] is True
    return workflow["id"], response.json()["id"]


def _chat(client: TestClient, session_id: str) -> Any:
    return client.websocket_connect(f"/v1/sessions/{session_id}/ws?token={EDITOR}")


def _until(ws: WebSocketTestSession, *kinds: str, limit: int = 60) -> list[dict[str, Any]]:
    frames = []
    for _ in range(limit):
        frame = ws.receive_json()
        frames.append(frame)
        if frame["type"] in kinds:
            return frames
    raise AssertionError(f"none of {kinds} in {frames}")


def _turn(text: str) -> dict[str, Any]:
    return {"type": "turn", "content": text, "context": {"page": "workflow"}}


def _workflow(client: TestClient, workflow_id: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    return body


def _propose(client: TestClient, model: ScriptedModel) -> tuple[str, str, dict[str, Any]]:
    _script(model)
    workflow_id, session_id = _review_session(client)
    with _chat(client, session_id) as ws:
        ws.send_json(_turn("add a notify step after the coverage check"))
        frames = _until(ws, "proposal", "turn.completed", "error")
    assert frames[-1]["type"] == "proposal", frames
    assert not [f for f in frames if f["type"] == "workflow"]
    return workflow_id, session_id, frames[-1]


def test_a_review_turn_commits_nothing_until_it_is_accepted(
    client: TestClient, model: ScriptedModel
) -> None:
    workflow_id, session_id, proposal = _propose(client, model)
    assert [c["id"] for c in proposal["changes"]] == ["c1", "c2"]
    assert _workflow(client, workflow_id)["version"] == 1
    versions = client.get(f"/v1/workflows/{workflow_id}/versions", headers=auth(EDITOR)).json()
    assert len(versions) == 1
    with client.websocket_connect(
        f"/v1/workflows/{workflow_id}/watch?token={EDITOR}&since_version=1"
    ) as watch:
        with _chat(client, session_id) as ws:
            ws.send_json(
                {"type": "review", "request_id": proposal["request_id"], "accepted": ["c1", "c2"]}
            )
            frames = _until(ws, "turn.completed", "error")
        assert frames[-1]["type"] == "turn.completed", frames
        (committed,) = [f for f in frames if f["type"] == "workflow"]
        assert committed["version"] == 2 and committed["yaml"] == proposal["yaml"]
        # The watcher's first frame is the accepted version: it saw nothing before.
        seen = watch.receive_json()
        assert seen["type"] == "workflow" and seen["version"] == 2
    stored = _workflow(client, workflow_id)
    assert stored["version"] == 2 and stored["yaml"] == proposal["yaml"]
    versions = client.get(f"/v1/workflows/{workflow_id}/versions", headers=auth(EDITOR)).json()
    assert sorted(v["version"] for v in versions) == [1, 2]
    session = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert session["pending_confirmation"] is None
    assert "Applied 2 of 2" in session["messages"][-1]["content"]


def test_accepting_some_over_rest(client: TestClient, model: ScriptedModel) -> None:
    workflow_id, session_id, proposal = _propose(client, model)
    pending = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert pending["pending_confirmation"]["proposal"]["diff"] == proposal["diff"]
    answer = client.post(
        f"/v1/sessions/{session_id}/review",
        json={"request_id": proposal["request_id"], "accepted": ["c1"]},
        headers=auth(EDITOR),
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["outcome"] == "applied" and body["version"] == 2
    doc = WorkflowDocument.from_yaml(_workflow(client, workflow_id)["yaml"])
    assert "notify-clinic" in doc.structure.jobs
    assert doc.structure.find_edge("check", "notify-clinic") is None


def test_rejecting_keeps_the_workflow(client: TestClient, model: ScriptedModel) -> None:
    workflow_id, session_id, proposal = _propose(client, model)
    with _chat(client, session_id) as ws:
        ws.send_json({"type": "review", "request_id": proposal["request_id"], "accepted": []})
        frames = _until(ws, "turn.completed", "error")
    assert frames[-1]["type"] == "turn.completed" and frames[-1]["version"] == 1
    assert not [f for f in frames if f["type"] == "workflow"]
    stored = _workflow(client, workflow_id)
    assert stored["version"] == 1 and stored["yaml"] == DOC


def test_a_dependent_answer_is_refused_and_the_proposal_stays_open(
    client: TestClient, model: ScriptedModel
) -> None:
    workflow_id, session_id, proposal = _propose(client, model)
    refused = client.post(
        f"/v1/sessions/{session_id}/review",
        json={"request_id": proposal["request_id"], "accepted": ["c2"]},
        headers=auth(EDITOR),
    )
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "dependent_change" and error["changes"] == ["c2"]
    assert "c1" in error["message"]
    assert _workflow(client, workflow_id)["version"] == 1
    session = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert session["pending_confirmation"]["request_id"] == proposal["request_id"]
    with _chat(client, session_id) as ws:  # answered again, with what it needs
        ws.send_json({"type": "review", "request_id": proposal["request_id"], "accepted": ["c2"]})
        assert _until(ws, "error")[-1]["code"] == "dependent_change"
        ws.send_json(
            {"type": "review", "request_id": proposal["request_id"], "accepted": ["c1", "c2"]}
        )
        assert _until(ws, "turn.completed", "error")[-1]["type"] == "turn.completed"
    assert _workflow(client, workflow_id)["version"] == 2


def test_a_proposal_made_stale_by_another_editor_commits_nothing(
    client: TestClient, model: ScriptedModel
) -> None:
    workflow_id, session_id, proposal = _propose(client, model)
    head = WorkflowDocument.from_yaml(DOC)
    assert run_tool(head, "remove_jobs", {"keys": ["check"]}).ok
    put = client.put(
        f"/v1/workflows/{workflow_id}",
        json={"yaml": head.to_yaml(), "expected_version": 1},
        headers=auth(EDITOR),
    )
    assert put.status_code == 200, put.text
    with _chat(client, session_id) as ws:
        ws.send_json(
            {"type": "review", "request_id": proposal["request_id"], "accepted": ["c1", "c2"]}
        )
        frames = _until(ws, "error", "turn.completed")
    assert frames[-1]["type"] == "error" and frames[-1]["code"] == "stale_proposal"
    assert _workflow(client, workflow_id)["version"] == 2  # the other editor's, nothing more
    session = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert session["pending_confirmation"] is None  # closed: ask again


def test_a_new_turn_or_a_confirm_while_a_proposal_is_open_is_refused(
    client: TestClient, model: ScriptedModel
) -> None:
    _, session_id, proposal = _propose(client, model)
    with _chat(client, session_id) as ws:
        ws.send_json(_turn("rename it"))
        assert _until(ws, "error")[-1]["code"] == "proposal_pending"
        ws.send_json({"type": "confirm", "request_id": proposal["request_id"], "approved": True})
        assert _until(ws, "error")[-1]["code"] == "proposal_pending"
        ws.send_json({"type": "review", "request_id": "review-nope", "accepted": []})
        assert _until(ws, "error")[-1]["code"] == "no_pending_proposal"


def test_review_on_one_turn_of_an_ordinary_session(
    client: TestClient, model: ScriptedModel
) -> None:
    _script(model)
    workflow = create_workflow(client)
    session = client.post(
        "/v1/sessions", json={"workflow_id": workflow["id"]}, headers=auth(EDITOR)
    ).json()
    assert session["review"] is False
    with _chat(client, session["id"]) as ws:
        ws.send_json({**_turn("add a notify step"), "review": True})
        assert _until(ws, "proposal", "turn.completed")[-1]["type"] == "proposal"
    assert _workflow(client, workflow["id"])["version"] == 1


def test_a_proposal_survives_a_restart(
    app_client: Callable[..., TestClient], model: ScriptedModel
) -> None:
    first = app_client()
    workflow_id, session_id, proposal = _propose(first, model)
    first.__exit__(None, None, None)
    second = app_client()
    session = second.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert session["pending_confirmation"]["proposal"]["yaml"] == proposal["yaml"]
    answer = second.post(
        f"/v1/sessions/{session_id}/review",
        json={"request_id": proposal["request_id"], "accepted": ["c1", "c2"]},
        headers=auth(EDITOR),
    )
    assert answer.status_code == 200, answer.text
    assert _workflow(second, workflow_id)["yaml"] == proposal["yaml"]


def test_accepting_replays_on_the_parsed_head_without_parsing_it_again(
    client: TestClient, model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The proposal's turn leaves the head parsed (not its draft); the accept path uses it
    (a 200-step document takes hundreds of ms to parse)."""
    workflow_id, session_id, proposal = _propose(client, model)
    turns = client.app.state.services.turns  # type: ignore[attr-defined]
    wait_until(
        lambda: workflow_id in turns._warm, timeout=10, message="the head was not kept parsed"
    )
    assert turns._warm[workflow_id][1] == 1  # the head's version, not the draft's
    parses: list[int] = []
    real = WorkflowDocument.from_yaml.__func__  # type: ignore[attr-defined]

    def counting(cls: type[WorkflowDocument], text: str, **kwargs: Any) -> WorkflowDocument:
        parses.append(len(text))
        return real(cls, text, **kwargs)

    monkeypatch.setattr(WorkflowDocument, "from_yaml", classmethod(counting))
    answer = client.post(
        f"/v1/sessions/{session_id}/review",
        json={"request_id": proposal["request_id"], "accepted": ["c1", "c2"]},
        headers=auth(EDITOR),
    )
    assert answer.status_code == 200, answer.text
    assert parses == []
    assert _workflow(client, workflow_id)["yaml"] == proposal["yaml"]


# --- a head another editor moved: what still applies, what is stale ------------------


def _propose_script(
    client: TestClient, model: ScriptedModel, *calls: tuple[str, dict[str, Any]]
) -> tuple[str, str, dict[str, Any]]:
    """A review-mode turn making ``calls`` (one change each); its proposal."""
    model.push(*(S.tool_calls(call) for call in calls), S.text("Done."))
    workflow_id, session_id = _review_session(client)
    with _chat(client, session_id) as ws:
        ws.send_json(_turn("change it"))
        frames = _until(ws, "proposal", "turn.completed", "error")
    assert frames[-1]["type"] == "proposal", frames
    return workflow_id, session_id, frames[-1]


def _other_editor_saves(client: TestClient, workflow_id: str, edit: Callable[[str], str]) -> int:
    """Another editor PUTs the head with ``edit`` made to its YAML; the new version."""
    current = _workflow(client, workflow_id)
    changed = edit(current["yaml"])
    assert changed != current["yaml"]
    put = client.put(
        f"/v1/workflows/{workflow_id}",
        json={"yaml": changed, "expected_version": current["version"]},
        headers=auth(OTHER_EDITOR),
    )
    assert put.status_code == 200, put.text
    version: int = put.json()["version"]
    return version


def _accept(client: TestClient, session_id: str, proposal: dict[str, Any]) -> Any:
    return client.post(
        f"/v1/sessions/{session_id}/review",
        json={
            "request_id": proposal["request_id"],
            "accepted": [c["id"] for c in proposal["changes"]],
        },
        headers=auth(EDITOR),
    )


def _assert_stale(
    client: TestClient, answer: Any, workflow_id: str, session_id: str, version: int
) -> str:
    assert answer.status_code == 409, answer.text
    error = answer.json()["error"]
    assert error["code"] == "stale_proposal", error
    assert _workflow(client, workflow_id)["version"] == version  # nothing committed
    session = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert session["pending_confirmation"] is None  # closed: ask again
    message: str = error["message"]
    return message


BOBS_CODE = "fn(s => { s.data.bobsWork = 42; return s; });"


def _connect_notify(doc: WorkflowDocument) -> None:
    """A new step, Notify clinic, after Check coverage."""
    notify = {"name": "Notify clinic", "key": "notify", "adaptor": "common"}
    assert run_tool(doc, "add_jobs", {"jobs": [notify]}).ok
    assert run_tool(doc, "add_edges", {"edges": [{"source": "check", "target": "notify"}]}).ok


def _bob_codes_check_and_connects_notify(yaml: str) -> str:
    """Code in Check coverage, and a new step Notify clinic after it."""
    doc = WorkflowDocument.from_yaml(yaml)
    assert stitch_job_code(doc, "check", BOBS_CODE + "\n").ok
    _connect_notify(doc)
    return doc.to_yaml()


def test_removing_a_step_someone_else_changed_meanwhile_is_stale(
    client: TestClient, model: ScriptedModel
) -> None:
    """The proposal said "Check coverage would be removed"; meanwhile another editor wrote
    its code and connected a step after it. Accepting must not delete their work."""
    workflow_id, session_id, proposal = _propose_script(
        client, model, ("remove_jobs", {"keys": ["check"]})
    )
    assert proposal["changes"][0]["impact"] == ["The step 'Check coverage' would be removed."]
    version = _other_editor_saves(client, workflow_id, _bob_codes_check_and_connects_notify)
    message = _assert_stale(
        client, _accept(client, session_id, proposal), workflow_id, session_id, version
    )
    assert "the step 'Check coverage'" in message
    head = WorkflowDocument.from_yaml(_workflow(client, workflow_id)["yaml"])
    assert BOBS_CODE in (head.structure.jobs["check"].body or "")
    assert head.structure.find_edge("check", "notify") is not None


def test_removing_a_step_that_now_leads_on_to_another_is_stale(
    client: TestClient, model: ScriptedModel
) -> None:
    """Only a new step after it, no change to the step itself: on the head the removal
    would also cut that step off, which the proposal never showed."""
    workflow_id, session_id, proposal = _propose_script(
        client, model, ("remove_jobs", {"keys": ["check"]})
    )

    def connect_notify(yaml: str) -> str:
        doc = WorkflowDocument.from_yaml(yaml)
        _connect_notify(doc)
        return doc.to_yaml()

    version = _other_editor_saves(client, workflow_id, connect_notify)
    message = _assert_stale(
        client, _accept(client, session_id, proposal), workflow_id, session_id, version
    )
    assert "also remove the connection from 'Check coverage' to 'Notify clinic'" in message
    assert "notify:" in _workflow(client, workflow_id)["yaml"]


def test_renaming_a_step_someone_else_renamed_meanwhile_is_stale(
    client: TestClient, model: ScriptedModel
) -> None:
    workflow_id, session_id, proposal = _propose_script(
        client, model, ("update_jobs", {"jobs": [{"key": "fetch", "name": "Get referral"}]})
    )
    version = _other_editor_saves(
        client, workflow_id, lambda y: y.replace("name: Fetch referral", "name: Pull referral")
    )
    message = _assert_stale(
        client, _accept(client, session_id, proposal), workflow_id, session_id, version
    )
    assert "someone else changed the step 'Pull referral'" in message
    assert "name: Pull referral" in _workflow(client, workflow_id)["yaml"]


def test_a_change_someone_else_did_not_touch_still_applies_on_the_moved_head(
    client: TestClient, model: ScriptedModel
) -> None:
    """Another editor changed Fetch referral's code and the workflow's name; the
    proposal adds a step after Check coverage: it applies, and keeps their work."""
    workflow_id, session_id, proposal = _propose(client, model)

    def elsewhere(yaml: str) -> str:
        doc = WorkflowDocument.from_yaml(yaml)
        assert stitch_job_code(doc, "fetch", "get('/referrals/new');\n").ok
        assert run_tool(doc, "update_workflow", {"name": "Referrals v2"}).ok
        return doc.to_yaml()

    version = _other_editor_saves(client, workflow_id, elsewhere)
    answer = _accept(client, session_id, proposal)
    assert answer.status_code == 200, answer.text
    assert answer.json()["outcome"] == "applied" and answer.json()["version"] == version + 1
    head = WorkflowDocument.from_yaml(_workflow(client, workflow_id)["yaml"])
    assert head.name == "Referrals v2"
    assert "get('/referrals/new');" in (head.structure.jobs["fetch"].body or "")
    assert head.structure.find_edge("check", "notify-clinic") is not None


# --- a test run while a proposal is open runs its draft ------------------------------


class _RecordingRunner:
    """Stands in for OpenFn's runtime: notes the document each run got, runs each step."""

    def __init__(self) -> None:
        self.ran: list[WorkflowDocument] = []

    async def run(
        self,
        workflow: WorkflowDocument,
        request: RunRequest,
        *,
        run_id: str,
        on_progress: ProgressCallback | None = None,
        **_: Any,
    ) -> TestRun:
        self.ran.append(workflow)
        steps = []
        for key, job in workflow.structure.jobs.items():
            if on_progress is not None:
                await on_progress(RunProgressEvent(run_id=run_id, step_key=key, status="started"))
            steps.append(StepRun(key=key, name=job.name, status="succeeded", duration_ms=1))
        return TestRun(run_id=run_id, status="succeeded", steps=steps, final_state=request.input)


def _run_frame(ws: WebSocketTestSession, **fields: Any) -> dict[str, Any]:
    ws.send_json({"type": "run", "input": {"data": {}}, **fields})
    frames = _until(ws, "run.completed", "error")
    assert frames[-1]["type"] == "run.completed", frames
    run: dict[str, Any] = frames[-1]["run"]
    return run


def test_a_run_while_a_proposal_is_open_runs_the_proposed_draft(
    client: TestClient, model: ScriptedModel
) -> None:
    runner = _RecordingRunner()
    services = client.app.state.services  # type: ignore[attr-defined]
    services.runs.runner = runner
    workflow_id, session_id, proposal = _propose(client, model)
    with _chat(client, session_id) as ws:
        run = _run_frame(ws)
        # The draft, labelled as one: made from version 1, not applied.
        assert (run["draft"], run["version"]) == (True, 1)
        assert "notify-clinic" in [step["key"] for step in run["steps"]]
        assert runner.ran[-1].to_yaml() == proposal["yaml"]
        # Stored as the proposal's turn's own test_run calls are.
        assert client.portal is not None
        stored = client.portal.call(services.store.get_test_run, run["run_id"])
        assert (stored.turn_id, stored.session_id) == (proposal["turn_id"], session_id)
        read = client.get(f"/v1/runs/{run['run_id']}", headers=auth(EDITOR)).json()
        assert (read["draft"], read["version"]) == (True, 1)

        pinned = _run_frame(ws, version=1)  # a version asked for by number is that version
        assert (pinned["draft"], pinned["version"]) == (False, 1)
        assert "notify-clinic" not in [step["key"] for step in pinned["steps"]]

        ws.send_json(
            {"type": "review", "request_id": proposal["request_id"], "accepted": ["c1", "c2"]}
        )
        assert _until(ws, "turn.completed", "error")[-1]["type"] == "turn.completed"
        after = _run_frame(ws)  # no proposal open: the head
        assert (after["draft"], after["version"]) == (False, 2)
    assert _workflow(client, workflow_id)["version"] == 2  # the draft runs committed nothing
