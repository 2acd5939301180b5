"""A workflow built in chat by the offline model, its code written and a credential
attached in chat, runs in OpenFn's runtime with a credential configuration only (no
YAML edits): the relative paths its starter code uses resolve against the baseUrl,
and the exports say what is missing before the credential is attached, nothing after."""

from __future__ import annotations

import asyncio
import json

from agents.testrun import LocalRunner
from tests.agents.offline.harness import run_turn
from tools.credentials import Credential
from tools.document import WorkflowDocument
from tools.document.openfn import export_workflow
from tools.testrun import RunRequest, SampleResponse

BASE = "https://shop.example"
SHOP = Credential.model_validate(
    {"name": "shop-api", "schema": "http", "owner": "ops@shop.example", "fields": {"baseUrl": BASE}}
)
ORDERS = [{"id": 1, "total": 20}, {"id": 2, "total": 35}]
SAVED = {"saved": 2}


def test_chat_built_http_workflow_runs_with_a_credential_configuration_only(
    runner: LocalRunner,
) -> None:
    built = run_turn(
        WorkflowDocument.new(),
        "create a workflow called Orders sync that gets orders from the shop api, "
        "then posts them to the crm api",
    )
    doc = built.doc
    written = run_turn(doc, "write code for all steps")
    doc = written.doc
    # The reply says which steps OpenFn would fail for want of a baseUrl...
    assert written.final_text.count("with a relative path and has no credential") == 2
    before = export_workflow(doc, "cli", credentials={SHOP.name: SHOP})
    assert len(before.warnings) == 2, before.warnings

    attached = run_turn(doc, "use the shop-api credential for the http steps")
    doc = attached.doc
    assert [name for name, _ in attached.tool_calls] == ["attach_credential"]
    exported = export_workflow(doc, "cli", credentials={SHOP.name: SHOP})
    # ...and once the credential with a baseUrl is attached, nothing is left to say.
    assert exported.warnings == ()
    steps = json.loads(exported.text)["steps"]
    assert [s.get("configuration") for s in steps if "expression" in s] == ["shop-api"] * 2
    assert all(
        a.startswith("@openfn/language-http@") and not a.endswith("@latest")
        for s in steps
        if "expression" in s
        for a in s["adaptors"]
    )

    # run_turn runs its own event loop, so this test is synchronous too.
    run = asyncio.run(
        runner.run(
            doc.to_yaml(),
            RunRequest(
                input={"data": {}},
                responses=[
                    SampleResponse(method="GET", url=f"{BASE}/orders", body=ORDERS),
                    SampleResponse(method="POST", url=f"{BASE}/orders", status=201, body=SAVED),
                ],
                configuration=dict(SHOP.fields),
            ),
            run_id="chat-built-credentials",
        )
    )
    assert run.status == "succeeded", (run.summary, [s.error for s in run.steps])
    assert [(r.method, r.url, r.matched) for r in run.requests] == [
        ("GET", f"{BASE}/orders", True),
        ("POST", f"{BASE}/orders", True),
    ]
    assert run.final_state["data"] == SAVED
