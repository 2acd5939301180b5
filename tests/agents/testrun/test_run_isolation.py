"""What a run may not do: load code the runtime lacks, reach the network, leak a credential."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agents.testrun import LocalRunner
from tests.agents.testrun.workflow import Edge, Job, workflow
from tools.testrun import RunRequest, SampleResponse


async def test_code_the_runtime_cannot_load_is_unsupported_per_step(runner: LocalRunner) -> None:
    doc = workflow(
        [
            Job("fine", "fn(s => { s.data.ran = true; return s; });"),
            Job("crm", "create('Contact', { LastName: 'Doe' });", adaptor="salesforce"),
            Job("typo", "fn(s => { s.data.x = ; return s; });"),
            Job("imports", "import { x } from 'somewhere';\nfn(s => s);"),
        ]
    )
    run = await runner.run(doc, RunRequest(), run_id="unsupported")

    assert run.status == "unsupported"
    reasons = {u.key: u.reason for u in run.unsupported}
    assert set(reasons) == {"crm", "typo", "imports"}
    assert reasons["crm"].startswith("@openfn/language-salesforce@latest is not installed here")
    assert "line 1, column 22: does not parse" in reasons["typo"]
    assert "ImportDeclaration is outside the supported subset" in reasons["imports"]
    # Nothing ran: no step, no final state, no edge fired (never a partial, wrong result).
    assert run.steps == [] and run.final_state is None
    assert not any(e.fired for e in run.edges)
    assert run.error is not None and "'Crm': @openfn/language-salesforce" in run.error


async def test_no_call_leaves_the_machine(runtime_dir: Path) -> None:
    """Without the network namespace (only node's own interception and guard), a call to
    a host with no sample, a raw socket and node's http module reach nothing: not even a
    server listening on this machine's loopback."""
    connections: list[int] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    escape = "const P = s.constructor.constructor('return process')();"  # out of the sandbox
    doc = workflow(
        [
            Job("loopback", f"get('http://127.0.0.1:{port}/records');", adaptor="http"),
            Job("remote", "post('http://10.1.2.3/records', { body: {} });", adaptor="http"),
            Job(
                "raw",
                f"fn(s => {{ {escape} const net = P.getBuiltinModule('node:net');"
                f" try {{ net.connect({port}, '127.0.0.1'); s.data.raw = 'connected'; }}"
                " catch (e) { s.data.raw = e.message; } return s; });\n"
                f"fn(async s => {{ {escape} const http = P.getBuiltinModule('node:http');"
                " s.data.http = await new Promise(done => { try {"
                f" http.get('http://127.0.0.1:{port}/x', r => done('got ' + r.statusCode))"
                ".on('error', e => done(e.message)); } catch (e) { done(e.message); } });"
                " return s; });",
            ),
        ],
        [
            Edge("webhook", "loopback", "always"),
            Edge("loopback", "remote", "on_job_failure"),
            Edge("remote", "raw", "on_job_failure"),
        ],
    )
    try:
        runner = LocalRunner(None, runtime_dir, isolate_network=False)
        run = await runner.run(doc, RunRequest(), run_id="offline")
        await asyncio.sleep(0.2)  # a connection that got out would have been accepted by now
    finally:
        server.close()
        await server.wait_closed()

    assert connections == []
    loopback, remote, raw = run.steps
    assert (loopback.status, remote.status, raw.status) == ("failed", "failed", "succeeded")
    assert f"no sample response matches GET http://127.0.0.1:{port}/records" in (
        loopback.error or ""
    )
    assert "ECONNREFUSED 10.1.2.3:80" in (remote.error or "")
    assert "no sample response matches POST http://10.1.2.3/records" in (remote.error or "")
    refused = f"network guard: refused connection to 127.0.0.1:{port}"
    assert raw.output["data"]["raw"].startswith(refused)
    assert raw.output["data"]["http"].startswith(refused)
    assert [(r.step_key, r.method, r.url, r.status, r.matched) for r in run.requests] == [
        ("loopback", "GET", f"http://127.0.0.1:{port}/records", None, False),
        ("remote", "POST", "http://10.1.2.3/records", None, False),
        ("raw", "CONNECT", f"tcp://127.0.0.1:{port}", None, False),
        ("raw", "CONNECT", f"tcp://127.0.0.1:{port}", None, False),
    ]


async def test_a_logged_credential_is_in_no_report_nor_event(runner: LocalRunner) -> None:
    secret, spaced = "s3cret-value", "p@ss w/rd&more"
    doc = workflow(
        [
            Job(
                "login",
                "fn(s => { console.log('password is', s.configuration.password,"
                " JSON.stringify(s.configuration)); s.data.copy = s.configuration.password;"
                " return s; });\n"
                "get(s => 'https://api.example.org/q?key='"
                " + encodeURIComponent(s.configuration.token),"
                " { query: { again: s => s.configuration.token } });",
                adaptor="http",
                credential="api",
            ),
            Job(
                "fail",
                "fn(s => { throw new Error('bad password ' + s.configuration.password); });",
                credential="api",
            ),
        ]
    )
    request = RunRequest(
        credentials={
            "api": {"password": secret, "token": spaced, "baseUrl": "https://api.example.org"}
        },
        responses=[SampleResponse(url="https://api.example.org/q*", body={"ok": True})],
    )
    detail = await runner.execute(doc, request, run_id="secret", record_bodies=True)
    run = detail.run

    text = run.model_dump_json() + json.dumps(detail.events)
    for leaked in (secret, spaced, "p%40ss", "p@ss", "w%2Frd"):
        assert leaked not in text
    # The code did log and send them (masked, not missing): the check above can fail.
    login, fail = run.steps
    assert (
        login.logs[0]
        == 'password is *** {"password":"***","token":"***","baseUrl":"https://api.example.org"}'
    )
    assert login.output["references"][-1]["copy"] == "***"  # data before the get
    (call,) = run.requests
    assert call.matched and call.url == "https://api.example.org/q?again=***&key=***"
    assert fail.error is not None and fail.error.endswith("bad password ***")


def test_an_address_is_kept_unless_it_carries_a_password() -> None:
    from agents.testrun.secrets import secret_values

    values = secret_values(
        {"baseUrl": "https://emr.example.org", "url": "https://ana:pw-77@emr.example.org"}
    )
    assert "https://emr.example.org" not in values
    assert "https://ana:pw-77@emr.example.org" in values
