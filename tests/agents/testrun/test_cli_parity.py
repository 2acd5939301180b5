"""The runner fails exactly where OpenFn's CLI fails: credentials as ``openfn --creds``
maps them to steps, and the job-code forms OpenFn's documentation shows, compiled as
``@openfn/compiler`` compiles them (each expected result is what the CLI reports)."""

from __future__ import annotations

import base64

from agents.testrun import LocalRunner
from agents.testrun.mock_http import MockHttp
from tests.agents.testrun.workflow import Edge, Job, workflow
from tools.testrun import RunRequest, SampleResponse

RELATIVE = "AdaptorError: UNEXPECTED_RELATIVE_URL"  # the adaptor's error, as the CLI prints it
ORDERS = SampleResponse(url="https://shop.example.org/orders", body={"orders": [1, 2]})
SHOW_CONFIGURATION = (
    "fn(state => { console.log(JSON.stringify(state.configuration)); return state; });"
)
MANAGER = SampleResponse(method="POST", url="https://shop.example.org/manager", body={"ok": 1})


def two_relative_steps(condition: str, fetch: str | None = None, save: str | None = None) -> str:
    return workflow(
        [
            Job("fetch", "get('orders');", adaptor="http", credential=fetch),
            Job("save", "post('manager', { body: $.data });", adaptor="http", credential=save),
        ],
        [Edge("webhook", "fetch", "always"), Edge("fetch", "save", condition)],
    )


async def test_relative_urls_without_a_credential_fail_at_the_first_step(
    runner: LocalRunner,
) -> None:
    # The older single configuration is given, but no step names a credential: as in
    # `openfn workflow.json --creds creds.json`, no step gets any configuration.
    request = RunRequest(
        configuration={"baseUrl": "https://shop.example.org"}, responses=[ORDERS, MANAGER]
    )
    run = await runner.run(two_relative_steps("on_job_success"), request, run_id="rel-1")

    assert run.status == "failed"
    assert [(s.key, s.status) for s in run.steps] == [("fetch", "failed")]
    assert RELATIVE in (run.steps[0].error or "")
    assert run.requests == []  # the adaptor refused before any call


async def test_relative_urls_fail_in_both_steps_when_both_run(runner: LocalRunner) -> None:
    request = RunRequest(
        credentials={"shop": {"baseUrl": "https://shop.example.org"}}, responses=[ORDERS, MANAGER]
    )
    run = await runner.run(two_relative_steps("always"), request, run_id="rel-2")

    assert [(s.key, s.status) for s in run.steps] == [("fetch", "failed"), ("save", "failed")]
    assert all(RELATIVE in (s.error or "") for s in run.steps)


async def test_each_step_gets_only_the_credential_it_names(runner: LocalRunner) -> None:
    # fetch names `shop` (given): it reaches the shop. save names `crm`, which the map
    # lacks: the CLI warns and runs it without configuration, so its relative URL fails.
    request = RunRequest(
        credentials={"shop": {"baseUrl": "https://shop.example.org"}}, responses=[ORDERS, MANAGER]
    )
    run = await runner.run(
        two_relative_steps("on_job_success", fetch="shop", save="crm"), request, run_id="named"
    )

    assert [(s.key, s.status) for s in run.steps] == [("fetch", "succeeded"), ("save", "failed")]
    assert RELATIVE in (run.steps[1].error or "")
    assert "No value was given for credential 'crm'" in run.summary
    assert [(r.method, r.url, r.matched) for r in run.requests] == [
        ("GET", "https://shop.example.org/orders", True)
    ]

    # With both credentials given, both reach their service.
    both = request.model_copy(
        update={
            "credentials": {
                "shop": {"baseUrl": "https://shop.example.org"},
                "crm": {"baseUrl": "https://shop.example.org"},
            }
        }
    )
    ok = await runner.run(
        two_relative_steps("on_job_success", fetch="shop", save="crm"), both, run_id="named-2"
    )
    assert ok.status == "succeeded", ok.summary
    assert [r.url for r in ok.requests] == [
        "https://shop.example.org/orders",
        "https://shop.example.org/manager",
    ]


async def test_a_step_without_a_credential_sees_no_configuration(runner: LocalRunner) -> None:
    doc = workflow(
        [
            Job("named", SHOW_CONFIGURATION, credential="lab"),
            Job("bare", SHOW_CONFIGURATION),
        ]
    )
    lab = {"baseUrl": "https://lab.example.org", "username": "u1"}
    request = RunRequest(credentials={"lab": lab})
    run = await runner.run(doc, request, run_id="bare")

    assert run.status == "succeeded", run.summary
    assert run.steps[0].logs == ['{"baseUrl":"https://lab.example.org","username":"u1"}']
    assert run.steps[1].logs == ["{}"]


def test_a_named_credential_reaches_its_path_with_basic_auth(runtime_dir: object) -> None:
    from agents.testrun import run_sync_detail

    doc = workflow(
        [Job("report", "post('result', { value: $.data.value });", "http", credential="lab")]
    )
    with MockHttp(default={"stored": True}) as mock:
        lab = {"baseUrl": f"{mock.base_url}/lab", "username": "lab-user", "password": "s3cret-pw"}
        creds = {"lab": lab}
        detail = run_sync_detail(
            doc,
            RunRequest(input={"value": 7}, credentials=creds),
            network="loopback",
        )
    run = detail.run

    assert run.status == "succeeded", run.summary
    (request,) = mock.requests
    assert (request.method, request.path, request.body) == ("POST", "/lab/result", {"value": 7})
    expected = "Basic " + base64.b64encode(b"lab-user:s3cret-pw").decode()
    assert request.authorization == expected
    assert "s3cret-pw" not in run.model_dump_json()
