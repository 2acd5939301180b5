"""The wire both ways: every agent event has its frame, and frames parse back as typed."""

from __future__ import annotations

import json
import typing

import pytest

from agents import events as ev
from app.ws.protocol import (
    SERVER_FRAME_ADAPTER,
    ErrorFrame,
    FrameError,
    TurnFrame,
    WorkflowFrame,
    error_frame,
    event_frame,
    parse_frame,
    wire,
)
from tools.errors import PlanwrightError
from tools.plan import PlannedTrigger, PlannedWorkflow, ProjectPlan
from tools.testrun import TestRun

SAMPLES: list[ev.Event] = [
    ev.RouteEvent(destination="planner"),
    ev.StatusEvent(phase="spinner", tool="add_jobs", text="Adding 1 step…", tool_use_id="tu_1"),
    ev.StatusEvent(
        phase="settled",
        tool="call_job_code_agent",
        text="Wrote code for Fetch",
        tool_use_id="tu_2",
        job_key="fetch",
        job_name="Fetch",
    ),
    ev.WorkflowEvent(version=2, yaml="name: X\n", changes=[{"action": "added"}]),
    ev.DeltaEvent(text="Hel"),
    ev.MessageEvent(text="Hello"),
    ev.ConfirmEvent(request_id="confirm-tu_1", question="Go ahead?"),
    ev.PlanProposedEvent(
        request_id="plan-t1-1",
        question="Build these 1 workflows?",
        plan=ProjectPlan(
            summary="One intake.",
            workflows=[
                PlannedWorkflow(
                    key="intake",
                    name="Intake",
                    purpose="Take referrals in.",
                    trigger=PlannedTrigger(type="webhook"),
                )
            ],
            order=["intake"],
        ),
    ),
    ev.PlanProgressEvent(workflow_key="intake", workflow_id="w1", status="built"),
    ev.ProposalEvent(
        request_id="review-t1",
        question="Apply these 1 changes?",
        base_version=3,
        yaml="name: X\n",
        diff="--- v3\n+++ draft\n",
        changes=[ev.ProposalChange(id="c1", tool="remove_jobs", summary="Removed A", impact=[])],
    ),
    ev.RunProgressEvent(run_id="r1", step_key="fetch", status="started"),
    ev.RunCompletedEvent(run=TestRun(run_id="r1", status="succeeded", summary="Ran 1 step.")),
    ev.TurnCompletedEvent(
        version=2, tool_rounds=1, usage=ev.TurnUsage(input_tokens=5), duration_ms=3
    ),
]


def test_every_agent_event_type_is_sampled() -> None:
    members = typing.get_args(typing.get_args(ev.Event)[0])
    assert {type(s) for s in SAMPLES} == set(members)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: f"{e.type}")
def test_an_event_frame_is_the_event_plus_its_turn(event: ev.Event) -> None:
    frame = event_frame(event, turn_id="t1", workflow_id="w1")
    data = wire(frame)
    expected = {**event.wire(), "turn_id": "t1"}
    if isinstance(event, ev.WorkflowEvent):
        expected["workflow_id"] = "w1"
    assert data == expected
    # The JSON a client receives parses back to the same typed frame.
    again = SERVER_FRAME_ADAPTER.validate_json(json.dumps(data))
    assert type(again) is type(frame)
    assert wire(again) == data


def test_fields_that_are_not_set_stay_off_the_wire() -> None:
    data = wire(event_frame(SAMPLES[1], turn_id="t1", workflow_id="w1"))
    assert "job_key" not in data and "job_name" not in data
    snapshot = WorkflowFrame(version=1, yaml="name: X\n", workflow_id="w1")
    assert wire(snapshot) == {
        "type": "workflow",
        "version": 1,
        "yaml": "name: X\n",
        "changes": [],
        "workflow_id": "w1",
    }


def test_error_frames_have_one_builder() -> None:
    assert wire(error_frame("busy", "Try again.")) == {
        "type": "error",
        "code": "busy",
        "message": "Try again.",
    }
    frame = error_frame("cancelled", "Cancelled.", "t9")
    assert isinstance(frame, ErrorFrame) and frame.turn_id == "t9"
    assert wire({"type": "workflow", "version": 3}) == {"type": "workflow", "version": 3}


def test_client_frames_parse_strictly_and_errors_are_planwright_errors() -> None:
    frame = parse_frame('{"type": "turn", "content": "hi"}')
    assert isinstance(frame, TurnFrame) and frame.context.page == "workflow"
    cases = {
        "not json": "invalid_json",
        '{"type": "dance"}': "unknown_frame_type",
        "[1]": "invalid_frame",
        '{"type": "turn", "content": "hi", "extra": 1}': "invalid_frame",
    }
    for text, code in cases.items():
        with pytest.raises(FrameError) as caught:
            parse_frame(text)
        assert caught.value.code == code, text
        assert isinstance(caught.value, PlanwrightError)
