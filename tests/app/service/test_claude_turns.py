"""The service with Claude, through the real anthropic SDK against the strict fake
Messages API (``ANTHROPIC_BASE_URL``): the conversation reaches Claude in every mode,
and a turn ends on time -- a ``retry-after`` past the cap, the turn deadline and a
model that keeps pausing each end it with an ``error`` frame of a stable code, keeping
only what was committed -- while a ``pause_turn`` within them is continued."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession

from agents.models.pause import MAX_CONTINUATIONS
from app.main import create_app
from tests.app.service.helpers import EDITOR, auth, connect, make_settings, setup, turn
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    delay_reply,
    rate_limit_reply,
    text_reply,
    tool_reply,
)
from tests.fakes.recording import RecordedRequest

SPEC = "Referral intake posts referrals to the EHR; then a coverage check after intake."
PLANNED = (
    "I would build two workflows: 1. Referral intake (webhook, posts to the EHR), "
    "2. Coverage check (runs after intake, asks the insurer). Shall I propose them?"
)
FOLLOW_UP = "now add a fax fallback to the second workflow"
TERMINAL = ("turn.completed", "error", "plan.proposed", "confirm.required")


@pytest.fixture
def claude_client(
    tmp_path: Path, database_url: str, fake_anthropic: FakeAnthropicServer
) -> Iterator[Callable[..., TestClient]]:
    """``claude_client(**settings)``: the service with Claude at the strict fake."""
    clients: list[TestClient] = []

    def start(**overrides: Any) -> TestClient:
        settings = make_settings(
            tmp_path,
            database_url,
            anthropic_api_key="sk-test-key",
            anthropic_base_url=fake_anthropic.base_url,
            **overrides,
        )
        client = TestClient(create_app(settings))
        client.__enter__()
        clients.append(client)
        return client

    yield start
    for client in clients:
        client.__exit__(None, None, None)


def finish(ws: WebSocketTestSession, limit: int = 80) -> list[dict[str, Any]]:
    """Frames up to the turn's last one (completed, an error, or a pause for review)."""
    frames: list[dict[str, Any]] = []
    while not frames or frames[-1]["type"] not in TERMINAL:
        assert len(frames) < limit, frames
        frames.append(ws.receive_json())
    return frames


def plan(text: str) -> dict[str, Any]:
    return {**turn(text), "mode": "plan"}


def texts(message: dict[str, Any]) -> str:
    """A message's text, whether a string or text blocks."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def assert_carries_the_plan_conversation(request: RecordedRequest) -> None:
    """The follow-up's request starts with the plan turn, as it was said, then asks."""
    spec, answer, *_, current = request.messages
    assert (spec["role"], answer["role"], current["role"]) == ("user", "assistant", "user")
    assert texts(spec) == SPEC
    assert texts(answer) == PLANNED
    assert FOLLOW_UP in texts(current)


def project_session(client: TestClient) -> tuple[str, str]:
    project = client.post("/v1/projects", json={"name": "Referrals"}, headers=auth(EDITOR))
    assert project.status_code == 201, project.text
    session = client.post(
        "/v1/sessions", json={"project_id": project.json()["id"]}, headers=auth(EDITOR)
    )
    assert session.status_code == 201, session.text
    return project.json()["id"], session.json()["id"]


# -- one conversation in every mode ------------------------------------------ #


def test_a_plan_follow_up_on_a_project_sends_claude_the_plan_turn(
    claude_client: Callable[..., TestClient], fake_anthropic: FakeAnthropicServer
) -> None:
    client = claude_client()
    _, session_id = project_session(client)
    fake_anthropic.queue(text_reply(PLANNED), text_reply("Which fax service should it use?"))
    with connect(client, session_id) as ws:
        ws.send_json(plan(SPEC))
        assert finish(ws)[-1]["type"] == "turn.completed"
        ws.send_json(plan(FOLLOW_UP))
        assert finish(ws)[-1]["type"] == "turn.completed"
    first, second = fake_anthropic.requests
    assert [t["name"] for t in second.tools] == ["propose_plan"]  # still a plan turn
    assert_carries_the_plan_conversation(second)
    assert texts(first.messages[0]).count(SPEC) == 1  # the first turn had no history
    assert fake_anthropic.rejected == [] and fake_anthropic.errors == []


def test_an_edit_turn_after_a_plan_turn_sends_claude_the_plan_turn(
    claude_client: Callable[..., TestClient], fake_anthropic: FakeAnthropicServer
) -> None:
    """A workflow session in a project: plan mode, then an ordinary (project) edit turn
    on the workflow -- the edit's planner request starts with the plan conversation."""
    client = claude_client()
    workflow_id, session_id = setup(client)
    fake_anthropic.queue(
        text_reply(PLANNED),
        tool_reply(("update_workflow", {"name": "Referral intake with fax"})),
        text_reply("Renamed it; the fax step comes next."),
    )
    with connect(client, session_id) as ws:
        ws.send_json(plan(SPEC))
        assert finish(ws)[-1]["type"] == "turn.completed"
        ws.send_json(turn(FOLLOW_UP))
        assert finish(ws)[-1]["type"] == "turn.completed"
    _, edit, after_tools = fake_anthropic.requests
    assert "propose_plan" not in {t["name"] for t in edit.tools}  # an edit turn
    assert_carries_the_plan_conversation(edit)
    assert after_tools.messages[:2] == edit.messages[:2]  # the same prefix every round
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert stored["name"] == "Referral intake with fax"
    assert fake_anthropic.rejected == [] and fake_anthropic.errors == []


# -- turns end on time --------------------------------------------------------- #


def _failed_turn(client: TestClient, session_id: str) -> dict[str, Any]:
    detail = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    first: dict[str, Any] = detail["turns"][0]
    # Nothing half-written: the user's message and no partial answer.
    assert [m["role"] for m in detail["messages"] if m["turn_id"] == first["id"]] in (
        ["user"],
        ["user", "assistant"],
    )
    answers = [
        m for m in detail["messages"] if m["turn_id"] == first["id"] and m["role"] == "assistant"
    ]
    assert all(not m["content"] for m in answers), answers
    assert detail["pending_confirmation"] is None
    return first


def _versions(client: TestClient, workflow_id: str) -> list[int]:
    listed = client.get(f"/v1/workflows/{workflow_id}/versions", headers=auth(EDITOR)).json()
    return sorted(v["version"] for v in listed)


def test_a_retry_after_past_the_cap_ends_the_turn_with_an_error_frame(
    claude_client: Callable[..., TestClient], fake_anthropic: FakeAnthropicServer
) -> None:
    client = claude_client(model_max_wait_s=2, model_max_retries=3)
    workflow_id, session_id = setup(client)
    fake_anthropic.queue(
        tool_reply(("update_workflow", {"name": "Intake"})),
        rate_limit_reply(retry_after=900),  # the second round is told to wait 15 minutes
        text_reply("Hello."),
    )
    with connect(client, session_id) as ws:
        ws.send_json(turn("rename it to Intake, then tidy up"))
        frames = finish(ws)
        error = frames[-1]
        assert error["type"] == "error" and error["code"] == "retry_after_too_long", error
        assert "900" in error["message"]
        assert [f["version"] for f in frames if f["type"] == "workflow"] == [2]
        ws.send_json(turn("hello"))  # the next turn is not held up
        assert finish(ws)[-1]["type"] == "turn.completed"
    assert len(fake_anthropic.requests) == 3  # the 429 was neither waited out nor retried
    first = _failed_turn(client, session_id)
    assert (first["status"], first["error_code"]) == ("failed", "retry_after_too_long")
    assert _versions(client, workflow_id) == [1, 2]  # the committed round, nothing after it
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert (stored["version"], stored["name"]) == (2, "Intake")


def test_the_turn_deadline_ends_a_slow_turn_with_an_error_frame(
    claude_client: Callable[..., TestClient], fake_anthropic: FakeAnthropicServer
) -> None:
    client = claude_client(turn_deadline_s=1.5)
    workflow_id, session_id = setup(client)
    fake_anthropic.queue(delay_reply(30, text_reply("too late")), text_reply("Hello."))
    with connect(client, session_id) as ws:
        ws.send_json(turn("describe every step at length"))
        error = finish(ws)[-1]
        assert error["type"] == "error" and error["code"] == "turn_deadline", error
        assert "time limit of 1.5 s" in error["message"]
        ws.send_json(turn("hello"))
        assert finish(ws)[-1]["type"] == "turn.completed"
    first = _failed_turn(client, session_id)
    assert (first["status"], first["error_code"]) == ("failed", "turn_deadline")
    assert [c["error"] for c in first["usage"]["calls"]] == ["turn_deadline"]
    assert _versions(client, workflow_id) == [1]


def test_a_paused_reply_is_continued_within_the_turn(
    claude_client: Callable[..., TestClient], fake_anthropic: FakeAnthropicServer
) -> None:
    client = claude_client()
    workflow_id, session_id = setup(client)
    fake_anthropic.queue(
        text_reply("Looking at the steps first.", stop_reason="pause_turn"),
        tool_reply(("update_workflow", {"name": "Intake"})),
        text_reply("Renamed the workflow."),
    )
    with connect(client, session_id) as ws:
        ws.send_json(turn("rename the workflow to Intake"))
        done = finish(ws)[-1]
    assert done["type"] == "turn.completed", done
    paused, continued, _ = fake_anthropic.requests
    assert continued.messages[:-1] == paused.messages  # the paused part sent back as is
    assert texts(continued.messages[-1]) == "Looking at the steps first."
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert stored["name"] == "Intake"
    detail = client.get(f"/v1/sessions/{session_id}", headers=auth(EDITOR)).json()
    assert detail["turns"][0]["status"] == "completed"
    assert len(detail["turns"][0]["usage"]["calls"]) == 3  # each part priced on its own
    assert fake_anthropic.rejected == []


def test_a_model_that_keeps_pausing_ends_the_turn_with_an_error_frame(
    claude_client: Callable[..., TestClient], fake_anthropic: FakeAnthropicServer
) -> None:
    client = claude_client()
    workflow_id, session_id = setup(client)
    fake_anthropic.queue(
        *[text_reply(f"Step {i}.", stop_reason="pause_turn") for i in range(MAX_CONTINUATIONS + 1)]
    )
    with connect(client, session_id) as ws:
        ws.send_json(turn("think about every step"))
        error = finish(ws)[-1]
    assert error["type"] == "error" and error["code"] == "model_pause_limit", error
    assert f"{MAX_CONTINUATIONS + 1} times" in error["message"]
    assert len(fake_anthropic.requests) == MAX_CONTINUATIONS + 1
    first = _failed_turn(client, session_id)
    assert (first["status"], first["error_code"]) == ("failed", "model_pause_limit")
    assert _versions(client, workflow_id) == [1]


def test_a_project_session_turn_past_the_cap_is_an_error_frame_too(
    claude_client: Callable[..., TestClient], fake_anthropic: FakeAnthropicServer
) -> None:
    """Plan turns run under the same cap: no proposal is stored half-made."""
    client = claude_client(model_max_wait_s=2)
    project_id, session_id = project_session(client)
    fake_anthropic.queue(rate_limit_reply(retry_after=900))
    with connect(client, session_id) as ws:
        ws.send_json(plan(SPEC))
        error = finish(ws)[-1]
    assert error["type"] == "error" and error["code"] == "retry_after_too_long", error
    project = client.get(f"/v1/projects/{project_id}", headers=auth(EDITOR)).json()
    assert project["plan"] is None and project["workflows"] == []
    _failed_turn(client, session_id)
