"""What a run reports through the real runner: branches, HTTP samples, FHIR, progress."""

from __future__ import annotations

import pytest

from agents.events import RunProgressEvent
from agents.testrun import LocalRunner
from tests.agents.testrun.workflow import Edge, Job, workflow
from tools.testrun import RunRequest, SampleResponse

BRANCHES = workflow(
    [
        Job("check", "fn(state => { state.data.checked = true; return state; });"),
        Job("hmo", "fn(state => { state.data.route = 'hmo'; return state; });", name="Notify HMO"),
        Job("other", "fn(state => { state.data.route = 'other'; return state; });"),
    ],
    [
        Edge("webhook", "check", "always"),
        Edge("check", "hmo", "js_expression", "state.data.plan === 'HMO'", "HMO plan"),
        Edge("check", "other", "js_expression", "state.data.plan !== 'HMO'"),
    ],
)


@pytest.mark.parametrize(
    ("plan", "taken", "skipped"), [("HMO", "hmo", "other"), ("PPO", "other", "hmo")]
)
async def test_each_sample_takes_its_own_js_branch(
    runner: LocalRunner, plan: str, taken: str, skipped: str
) -> None:
    run = await runner.run(BRANCHES, RunRequest(input={"plan": plan}), run_id=f"branch-{plan}")

    assert run.status == "succeeded", run.summary
    assert [s.key for s in run.steps] == ["check", taken]
    assert all(s.status == "succeeded" for s in run.steps)
    fired = {(e.source, e.target): e.fired for e in run.edges}
    assert fired == {("webhook", "check"): True, ("check", taken): True, ("check", skipped): False}
    assert run.final_state["data"] == {"plan": plan, "checked": True, "route": taken}
    # A step's input is the state it started with, not what its code made of it.
    assert run.steps[0].input == {"data": {"plan": plan}}
    assert run.steps[1].input["data"] == {"plan": plan, "checked": True}
    if taken == "hmo":
        assert "took the 'HMO plan' branch to 'Notify HMO'" in run.summary


HTTP = workflow(
    [
        Job(
            "fetch",
            "get('https://emr.example.org/patients/42');\n"
            "post('https://emr.example.org/visits',"
            " state => ({ body: { patient: state.data.id } }));",
            adaptor="http",
        ),
        Job("after", "fn(state => { state.data.after = true; return state; });"),
    ]
)
PATIENT = SampleResponse(url="https://emr.example.org/patients/*", body={"id": 42, "name": "Ada"})


async def test_http_calls_are_answered_from_their_samples(runner: LocalRunner) -> None:
    visit = SampleResponse(
        method="post", url="https://emr.example.org/visits", status=201, body={"visit": "v-9"}
    )
    run = await runner.run(HTTP, RunRequest(responses=[PATIENT, visit]), run_id="http-ok")

    assert run.status == "succeeded", run.summary
    assert [(r.step_key, r.method, r.url, r.status, r.matched) for r in run.requests] == [
        ("fetch", "GET", "https://emr.example.org/patients/42", 200, True),
        ("fetch", "POST", "https://emr.example.org/visits", 201, True),
    ]
    fetch = run.steps[0]
    assert fetch.output["data"] == {"visit": "v-9"}
    assert fetch.output["references"][-1] == {"id": 42, "name": "Ada"}
    assert any("GET https://emr.example.org/patients/42 - 200" in line for line in fetch.logs)
    assert run.final_state["data"] == {"visit": "v-9", "after": True}


async def test_a_call_without_a_sample_fails_its_step_and_says_which(runner: LocalRunner) -> None:
    run = await runner.run(HTTP, RunRequest(responses=[PATIENT]), run_id="http-missing")

    assert run.status == "failed"
    assert [(r.method, r.url, r.status, r.matched) for r in run.requests] == [
        ("GET", "https://emr.example.org/patients/42", 200, True),
        ("POST", "https://emr.example.org/visits", None, False),
    ]
    assert [(s.key, s.status) for s in run.steps] == [("fetch", "failed")]
    error = run.steps[0].error or ""
    assert "no sample response matches POST https://emr.example.org/visits" in error
    assert {(e.source, e.target): e.fired for e in run.edges}[("fetch", "after")] is False
    assert "no sample answered POST https://emr.example.org/visits" in run.summary


async def test_a_fhir_create_posts_to_the_configured_server(runner: LocalRunner) -> None:
    doc = workflow(
        [
            Job(
                "register",
                "create('Patient', { name: [{ family: state => state.data.family }] });",
                adaptor="fhir",
                credential="hapi",
            )
        ]
    )
    request = RunRequest(
        input={"family": "Doe"},
        credentials={"hapi": {"baseUrl": "https://hapi.example.org/fhir"}},
        responses=[
            SampleResponse(
                method="POST",
                url="https://hapi.example.org/fhir/Patient",
                status=201,
                body={"resourceType": "Patient", "id": "p-1"},
            )
        ],
    )
    detail = await runner.execute(doc, request, run_id="fhir", record_bodies=True)
    run = detail.run

    assert run.status == "succeeded", run.summary
    assert [(r.method, r.url, r.status, r.matched) for r in run.requests] == [
        ("POST", "https://hapi.example.org/fhir/Patient", 201, True)
    ]
    assert run.final_state["data"] == {"resourceType": "Patient", "id": "p-1"}
    assert run.runtime["@openfn/language-fhir"] == "5.0.15"
    (body,) = detail.request_bodies
    assert '"resourceType":"Patient"' in body and '"family":"Doe"' in body


async def test_progress_comes_per_step_in_run_order(runner: LocalRunner) -> None:
    doc = workflow(
        [
            Job("first", "fn(state => state);"),
            Job("second", "fn(state => { throw new Error('second broke'); });"),
            Job("recover", "fn(state => { state.data.recovered = true; return state; });"),
            Job("never", "fn(state => state);"),
        ],
        [
            Edge("webhook", "first", "always"),
            Edge("first", "second"),
            Edge("second", "recover", "on_job_failure"),
            Edge("second", "never", "on_job_success"),
        ],
    )
    seen: list[RunProgressEvent] = []

    async def on_progress(event: RunProgressEvent) -> None:
        seen.append(event)

    run = await runner.run(doc, RunRequest(), run_id="progress", on_progress=on_progress)

    assert [(e.step_key, e.status) for e in seen] == [
        ("first", "started"),
        ("first", "succeeded"),
        ("second", "started"),
        ("second", "failed"),
        ("recover", "started"),
        ("recover", "succeeded"),
    ]
    assert {e.run_id for e in seen} == {"progress"}
    assert [(s.key, s.status) for s in run.steps] == [
        ("first", "succeeded"),
        ("second", "failed"),
        ("recover", "succeeded"),
    ]
    assert "second broke" in (run.steps[1].error or "")
    assert run.status == "failed"
