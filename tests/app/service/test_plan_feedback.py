"""Feedback on a proposed plan that the planner cannot apply, through the service
(DESIGN §5a.2, issue 23): it never crashes the turn. The same plan stays pending and
answerable under a new request id, the planner says what it made of the feedback (a
``message`` frame, stored, and the lead of the review question), and a revised plan
is a new request id too; never one already asked. The offline model plans, as the
web page's embedded default; SQLite and Postgres."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models.base import ChatModel, ModelRole
from agents.offline import OfflineModel
from app.main import create_app
from tests.agents.plan.helpers import INTAKE, ProposingModel, plan_of
from tests.app.service.helpers import EDITOR, NAMES, SPEC, auth, connect, make_settings, turn, until
from tools.plan import ProjectPlan

MERGE = "merge the two checks into one workflow"  # the web page's feedback example
ENDS = ("plan.proposed", "turn.completed", "error")


@pytest.fixture
def model() -> OfflineModel:
    return OfflineModel()


def _app(tmp_path: Path, database_url: str, model: ChatModel) -> TestClient:
    """An app of its own on the test's database and checkpoints (enter it to start)."""
    models: dict[ModelRole, ChatModel] = {"router": model, "planner": model, "job_code": model}
    return TestClient(create_app(make_settings(tmp_path, database_url), models=models))


def _project_session(client: TestClient) -> tuple[str, str]:
    project = client.post("/v1/projects", json={"name": "Referrals"}, headers=auth(EDITOR))
    assert project.status_code == 201, project.text
    session = client.post(
        "/v1/sessions", json={"project_id": project.json()["id"]}, headers=auth(EDITOR)
    )
    assert session.status_code == 201, session.text
    return project.json()["id"], session.json()["id"]


def _propose(client: TestClient, session_id: str) -> dict[str, Any]:
    with connect(client, session_id) as ws:
        ws.send_json({**turn(SPEC), "mode": "plan"})
        proposal = until(ws, "plan.proposed")[-1]
    assert [w["name"] for w in proposal["plan"]["workflows"]] == NAMES
    return proposal


def _answer(
    client: TestClient,
    session_id: str,
    request_id: str,
    *,
    approved: bool = False,
    feedback: str | None = None,
) -> list[dict[str, Any]]:
    """The frames of one answer, up to its review, its end or its error."""
    answer: dict[str, Any] = {"type": "confirm", "request_id": request_id, "approved": approved}
    if feedback is not None:
        answer["feedback"] = feedback
    with connect(client, session_id) as ws:
        ws.send_json(answer)
        frames = until(ws, ENDS, limit=400)
    return frames


def _said(frames: list[dict[str, Any]]) -> str:
    (message,) = [f for f in frames if f["type"] == "message"]
    text: str = message["text"]
    return text


def _detail(client: TestClient, session_id: str) -> dict[str, Any]:
    detail: dict[str, Any] = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    return detail


def _plan_record(client: TestClient, project_id: str) -> dict[str, Any]:
    project = client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()
    record: dict[str, Any] = project["plan"]
    return record


def _assert_kept(
    client: TestClient,
    project_id: str,
    session_id: str,
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    """``after`` asks about ``before``'s plan again, under a request id of its own, and
    the store agrees: the plan is pending on that id, the turn paused on it."""
    assert after["type"] == "plan.proposed"
    assert after["turn_id"] == before["turn_id"]
    assert after["request_id"] != before["request_id"]
    assert after["revision"] == before["revision"]
    assert ProjectPlan.model_validate(after["plan"]) == ProjectPlan.model_validate(before["plan"])
    record = _plan_record(client, project_id)
    assert record["status"] == "proposed" and record["request_id"] == after["request_id"]
    assert [w["name"] for w in record["plan"]["workflows"]] == NAMES
    detail = _detail(client, session_id)
    assert detail["pending_confirmation"]["request_id"] == after["request_id"]
    assert [t["status"] for t in detail["turns"]] == ["paused"]
    assert detail["confirmations"][-1]["request_id"] == after["request_id"]
    assert detail["confirmations"][-1]["approved"] is None


def _assert_builds(client: TestClient, project_id: str, session_id: str, request_id: str) -> None:
    frames = _answer(client, session_id, request_id, approved=True)
    assert frames[-1]["type"] == "turn.completed", frames[-1]
    built = [f["workflow_key"] for f in frames if f.get("status") == "built"]
    assert len(built) == 4, frames
    assert _plan_record(client, project_id)["status"] == "built"
    names = {
        w["name"]
        for w in client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()["workflows"]
    }
    assert names == set(NAMES)


def test_unrecognised_feedback_keeps_the_plan_pending_and_says_what_it_understood(
    client: TestClient,
) -> None:
    project_id, session_id = _project_session(client)
    first = _propose(client, session_id)
    frames = _answer(client, session_id, first["request_id"], feedback=MERGE)
    assert not [f for f in frames if f["type"] == "error"], frames
    again = frames[-1]
    _assert_kept(client, project_id, session_id, first, again)
    said = _said(frames)
    assert f'"{MERGE}"' in said and "unchanged" in said
    assert again["question"].startswith(said)  # clients that show only the review
    detail = _detail(client, session_id)
    answered, asked = detail["confirmations"]
    assert answered["request_id"] == first["request_id"]
    assert (answered["approved"], answered["feedback"]) == (False, MERGE)
    assert answered["answered_by"] and answered["answered_at"]
    assert asked["question"] == again["question"]
    # A reload shows what the socket showed: the planner's words are a stored message.
    assert detail["messages"][-1] == {
        **detail["messages"][-1],
        "role": "assistant",
        "content": said,
    }
    _assert_builds(client, project_id, session_id, again["request_id"])


def test_partly_understood_feedback_changes_nothing_and_names_the_part_it_did_not(
    client: TestClient,
) -> None:
    project_id, session_id = _project_session(client)
    first = _propose(client, session_id)
    feedback = f"Rename Coverage check to Eligibility check. {MERGE.capitalize()}."
    frames = _answer(client, session_id, first["request_id"], feedback=feedback)
    again = frames[-1]
    _assert_kept(client, project_id, session_id, first, again)  # not half applied
    assert f'"{MERGE.capitalize()}"' in _said(frames)
    # The part it understood, said alone, revises the plan: a new revision, a new id.
    frames = _answer(
        client,
        session_id,
        again["request_id"],
        feedback="rename Coverage check to Eligibility check",
    )
    revised = frames[-1]
    assert revised["type"] == "plan.proposed" and revised["revision"] == first["revision"] + 1
    assert revised["request_id"] not in (first["request_id"], again["request_id"])
    assert [w["name"] for w in revised["plan"]["workflows"]][1] == "Eligibility check"
    record = _plan_record(client, project_id)
    assert (record["request_id"], record["revision"]) == (
        revised["request_id"],
        revised["revision"],
    )
    ids = [c["request_id"] for c in _detail(client, session_id)["confirmations"]]
    assert ids == [first["request_id"], again["request_id"], revised["request_id"]]


def test_contradictory_feedback_keeps_the_plan_whole_and_pending(client: TestClient) -> None:
    project_id, session_id = _project_session(client)
    first = _propose(client, session_id)
    feedback = "remove Coverage check. Coverage check uses Intake's result"
    frames = _answer(client, session_id, first["request_id"], feedback=feedback)
    again = frames[-1]
    _assert_kept(client, project_id, session_id, first, again)
    said = _said(frames)
    assert "Coverage check" in said and "unchanged" in said
    rejected = _answer(client, session_id, again["request_id"])  # a plain no still works
    assert rejected[-1]["type"] == "turn.completed"
    assert _plan_record(client, project_id)["status"] == "rejected"
    assert client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()["workflows"] == []


def test_feedback_twice_in_a_row_asks_again_each_time_and_only_the_newest_answers(
    client: TestClient,
) -> None:
    project_id, session_id = _project_session(client)
    first = _propose(client, session_id)
    second = _answer(client, session_id, first["request_id"], feedback=MERGE)[-1]
    _assert_kept(client, project_id, session_id, first, second)
    frames = _answer(client, session_id, second["request_id"], feedback="make it nicer")
    third = frames[-1]
    _assert_kept(client, project_id, session_id, second, third)
    assert '"make it nicer"' in _said(frames)
    ids = [first["request_id"], second["request_id"], third["request_id"]]
    assert len(set(ids)) == 3
    # An answer to a review already answered is refused, and changes nothing.
    for old in ids[:2]:
        stale = _answer(client, session_id, old, approved=True)
        assert [(f["type"], f["code"]) for f in stale] == [("error", "no_pending_confirmation")]
    _assert_kept(client, project_id, session_id, second, third)
    confirmations = _detail(client, session_id)["confirmations"]
    assert [(c["request_id"], c["approved"], c["feedback"]) for c in confirmations] == [
        (ids[0], False, MERGE),
        (ids[1], False, "make it nicer"),
        (ids[2], None, None),
    ]
    _assert_builds(client, project_id, session_id, third["request_id"])


def test_a_plan_kept_by_feedback_is_still_answerable_after_a_restart(
    tmp_path: Path, database_url: str
) -> None:
    def app() -> TestClient:  # a fresh process's worth: its own model, same database
        return _app(tmp_path, database_url, OfflineModel())

    with app() as before:
        project_id, session_id = _project_session(before)
        first = _propose(before, session_id)
        kept = _answer(before, session_id, first["request_id"], feedback=MERGE)[-1]
        _assert_kept(before, project_id, session_id, first, kept)
    with app() as after:
        _assert_kept(after, project_id, session_id, first, kept)
        assert _detail(after, session_id)["pending_confirmation"]["plan"]["revision"] == 1
        again = _answer(after, session_id, kept["request_id"], feedback=MERGE)[-1]
        _assert_kept(after, project_id, session_id, kept, again)
        assert again["request_id"] != first["request_id"]
    with app() as last:
        _assert_builds(last, project_id, session_id, again["request_id"])


def test_a_planner_reply_without_words_or_with_plans_that_never_hold_keeps_the_plan(
    tmp_path: Path, database_url: str
) -> None:
    """The Claude path: the planner answers feedback with nothing to say, then only with
    plans that do not hold: each time the plan under review stays, asked again and said
    why."""
    empty: dict[str, Any] = {"summary": "none", "workflows": []}
    model = ProposingModel(plan_of(INTAKE), "  ", empty, empty, empty)
    with _app(tmp_path, database_url, model) as client:
        project_id, session_id = _project_session(client)
        with connect(client, session_id) as ws:
            ws.send_json({**turn("the spec"), "mode": "plan"})
            first = until(ws, "plan.proposed")[-1]
        frames = _answer(client, session_id, first["request_id"], feedback="hmm")
        second = frames[-1]
        assert second["type"] == "plan.proposed" and second["request_id"] != first["request_id"]
        said = _said(frames)  # the planner's stand-in words for a reply without any
        assert said.strip() and second["question"].startswith(said)
        frames = _answer(client, session_id, second["request_id"], feedback="all of it")
        third = frames[-1]
        assert third["type"] == "plan.proposed"
        assert third["request_id"] not in (first["request_id"], second["request_id"])
        plan = ProjectPlan.model_validate(third["plan"])
        assert plan == ProjectPlan.model_validate(first["plan"])
        assert "nothing was proposed" in _said(frames)
        record = _plan_record(client, project_id)
        assert record["status"] == "proposed" and record["request_id"] == third["request_id"]
        assert not model.proposals  # every attempt was asked of the planner
