"""Server frames for review mode, test runs and plan mode, shaped as the contract sends them
(``agents.events`` / ``app.ws.protocol``; ``test_frames_match_the_contract`` checks that
the server's own models accept every one), for the client's unit tests."""

from __future__ import annotations

import copy
from typing import Any

DOC = """\
name: Referral intake
jobs:
  fetch:
    name: Get referrals
    adaptor: '@openfn/language-http@latest'
    body: get('https://intake.example/referrals');
  check:
    name: Check coverage
    adaptor: '@openfn/language-common@latest'
    body: fn(state => state);
  notify:
    name: Notify clinic
    adaptor: '@openfn/language-common@latest'
    body: fn(state => state);
triggers:
  webhook:
    type: webhook
    enabled: true
edges:
  webhook->fetch:
    source_trigger: webhook
    target_job: fetch
    condition_type: always
    enabled: true
  fetch->check:
    source_job: fetch
    target_job: check
    condition_type: on_job_success
    enabled: true
  check->notify:
    source_job: check
    target_job: notify
    condition_type: on_job_success
    enabled: true
"""

DIFF_LINES = [
    "--- v3",
    "+++ draft",
    "@@ -7,14 +7,6 @@",
    "     body: get('https://intake.example/referrals');",
    "-  check:",
    "-    name: Check coverage",
    "-    adaptor: '@openfn/language-common@latest'",
    "-    body: fn(state => state);",
    "   notify:",
    "+  dedupe:",
    "+    name: Dedupe",
]
DIFF = "\n".join(DIFF_LINES) + "\n"

_PROPOSAL: dict[str, Any] = {
    "type": "proposal",
    "turn_id": "t1",
    "request_id": "p1",
    "question": "Apply these 2 changes?",
    "base_version": 3,
    "yaml": DOC,
    "diff": DIFF,
    "changes": [
        {
            "id": "c1",
            "tool": "remove_jobs",
            "summary": "Removed Check coverage (check).",
            "impact": ["'Notify clinic' would no longer run."],
        },
        {"id": "c2", "tool": "add_job", "summary": "Added Dedupe (dedupe, common).", "impact": []},
    ],
}

_STEP_INPUT = {"data": {"patient": {"id": "p-1", "plan": "BlueCross HMO"}}}

_RUN_FAILED: dict[str, Any] = {
    "run_id": "run-1",
    "workflow_id": "w1",
    "version": 3,
    "status": "failed",
    "steps": [
        {
            "key": "fetch",
            "name": "Get referrals",
            "status": "succeeded",
            "duration_ms": 42,
            "input": {"data": {}},
            "output": _STEP_INPUT,
            "logs": [],
            "truncated": False,
        },
        {
            "key": "check",
            "name": "Check coverage",
            "status": "failed",
            "duration_ms": 1250,
            "input": _STEP_INPUT,
            "output": None,
            "error": "Error: no sample response for GET https://fhir.example/Coverage\n"
            "    at request",
            "logs": ["looking up coverage"],
            "truncated": False,
        },
    ],
    "edges": [
        {"source": "webhook", "target": "fetch", "fired": True},
        {"source": "fetch", "target": "check", "fired": True},
        {"source": "check", "target": "notify", "fired": False},
    ],
    "requests": [
        {
            "step_key": "fetch",
            "method": "GET",
            "url": "https://intake.example/referrals",
            "status": 200,
            "matched": True,
        },
        {
            "step_key": "check",
            "method": "GET",
            "url": "https://fhir.example/Coverage",
            "status": None,
            "matched": False,
        },
    ],
    "unsupported": [],
    "final_state": None,
    "error": None,
    "summary": "Ran 2 of 3 steps; Check coverage failed.",
    "duration_ms": 1400,
    "runtime": {"@openfn/runtime": "1.9.5"},
    "created_at": "2026-12-03T09:00:00Z",
    "created_by": "editor-abc",
}


def proposal(**changes: Any) -> dict[str, Any]:
    return {**copy.deepcopy(_PROPOSAL), **changes}


def failed_run(**changes: Any) -> dict[str, Any]:
    return {**copy.deepcopy(_RUN_FAILED), **changes}


def succeeded_run() -> dict[str, Any]:
    run = failed_run(status="succeeded", summary="Ran 3 of 3 steps.", requests=[])
    for step in run["steps"]:
        step.update(status="succeeded", error=None)
    run["steps"].append({**run["steps"][1], "key": "notify", "name": "Notify clinic"})
    return run


def progress(step_key: str, status: str, turn_id: str | None = None) -> dict[str, Any]:
    frame = {"type": "run.progress", "run_id": "run-1", "step_key": step_key, "status": status}
    return frame | ({"turn_id": turn_id} if turn_id else {})


def completed(run: dict[str, Any], turn_id: str | None = None) -> dict[str, Any]:
    return {"type": "run.completed", "run": run} | ({"turn_id": turn_id} if turn_id else {})


def all_frames() -> list[dict[str, Any]]:
    """Every server frame above, for the contract check."""
    return [
        proposal(),
        progress("fetch", "started"),
        progress("check", "failed", turn_id="t1"),
        completed(failed_run()),
        completed(succeeded_run(), turn_id="t1"),
    ]


PLAN: dict[str, Any] = {
    "summary": "Intake, then the coverage check.",
    "workflows": [
        {
            "key": "coverage",
            "name": "Coverage check",
            "purpose": "Check the patient's coverage.",
            "trigger": {"type": "webhook", "cron_expression": None},
            "inputs": ["referral"],
            "outputs": ["coverage"],
            "depends_on": ["intake"],
            "steps": ["Look up the plan", "Record it"],
        },
        {
            "key": "intake",
            "name": "Referral intake",
            "purpose": "Take referrals in.",
            "trigger": {"type": "cron", "cron_expression": "0 7 * * *"},
            "inputs": [],
            "outputs": ["referral"],
            "depends_on": [],
            "steps": [],
        },
    ],
    "order": ["intake", "coverage"],
}


CONTRACTS = [
    {
        "source": "intake",
        "target": "coverage",
        "data": ["referral"],
        "via": "webhook",
        "webhook_path": "p-coverage",
    }
]
