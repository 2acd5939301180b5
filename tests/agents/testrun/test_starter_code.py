"""Every starter body the offline code agent writes, for each adaptor test runs install
here, runs in the real runtime on a sample and ends with the result of the operation
its step is about (a "post" step ends with the POST's answer, never a GET's)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.offline.codegen import starter_code
from agents.testrun import LocalRunner
from tests.agents.testrun.workflow import Job, workflow
from tools.catalogue.adaptors import Adaptor, load_catalogue
from tools.testrun import RunRequest, SampleResponse

BASE = "https://api.example.org"
READ = {"read": True, "items": [{"id": 1}]}
WRITTEN = {"written": True}
INPUT = {"plan": "HMO", "patientId": "p-1"}
SAMPLES = [
    SampleResponse(method="GET", url=f"{BASE}/*", body=READ),
    *(
        SampleResponse(method=method, url=f"{BASE}/*", status=201, body=WRITTEN)
        for method in ("POST", "PUT", "PATCH")
    ),
]
# (step name, request, what the step's result is: the last operation's answer, or the input)
REQUESTS = [
    ("Get orders", "", READ),
    ("Fetch the Coverage for the patient", "", READ),
    ("Post order list to crm", "", WRITTEN),
    ("Send the check results to the registry", "", WRITTEN),
    ("Sync patients", "fetch the patients and post them to the registry", WRITTEN),
    ("Create patient", "create the patient record", WRITTEN),
    ("Transform data", "", INPUT),
]
INSTALLED = sorted(
    (a for a in load_catalogue().adaptors.values() if a.installed), key=lambda a: a.name
)


def _functions(adaptor: Adaptor) -> list[dict[str, Any]]:
    return [
        {"name": f.name, "params": list(f.params) if f.params_known else None}
        for f in adaptor.functions
    ]


def test_the_catalogue_lists_installed_adaptors() -> None:
    assert {a.short_name for a in INSTALLED} == {"common", "http", "fhir"}


@pytest.mark.parametrize("adaptor", INSTALLED, ids=lambda a: a.short_name)
@pytest.mark.parametrize(("name", "request_", "result"), REQUESTS, ids=[r[0] for r in REQUESTS])
async def test_starter_code_runs_and_ends_with_its_operation(
    runner: LocalRunner, adaptor: Adaptor, name: str, request_: str, result: dict[str, Any]
) -> None:
    spec = f"{adaptor.short_name}@{adaptor.version}"
    body = starter_code({"name": name, "adaptor": adaptor.pinned}, _functions(adaptor), request_)
    assert "minimal placeholder" not in body, body
    # Starter paths are relative, so the step names a credential with the baseUrl (as the
    # CLI runs it with --creds); a step without one fails as in OpenFn (test_cli_parity).
    document = workflow([Job("step", body, adaptor=spec, name=name, credential="api")])

    run = await runner.run(
        document,
        RunRequest(
            input={"data": INPUT}, responses=SAMPLES, credentials={"api": {"baseUrl": BASE}}
        ),
        run_id=f"starter-{adaptor.short_name}-{name}",
    )

    assert run.status == "succeeded", (body, run.summary, [s.error for s in run.steps])
    calls = [(r.method, r.matched) for r in run.requests]
    assert all(matched for _, matched in calls), calls
    # common has no HTTP operations: its starter code only shapes the data.
    expected = INPUT if adaptor.short_name == "common" else result
    assert run.final_state["data"] == expected, body
