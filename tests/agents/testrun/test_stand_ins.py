"""A step pinned to an adaptor version npm does not serve here (the facts' current
``@openfn/language-http@7.3.2``; the registry here has 7.2.10) runs with the installed
version of the same major version, and the run says so, by step, in a field and in its
summary: a green run never passes for a version that did not run."""

from __future__ import annotations

from agents.testrun import LocalRunner
from tests.agents.testrun.workflow import Job, workflow
from tools.catalogue.adaptors import load_catalogue
from tools.testrun import RunRequest, SampleResponse

BASE = "https://api.example.org"


async def test_a_pinned_version_not_installed_runs_as_the_installed_one_and_says_so(
    runner: LocalRunner,
) -> None:
    http = load_catalogue().get("@openfn/language-http")
    assert http is not None and http.installed and http.installed != http.version
    document = workflow(
        [
            Job("fetch", "get('orders');", adaptor=f"http@{http.version}", credential="api"),
            Job("shape", "fn(state => state);"),
        ]
    )
    run = await runner.run(
        document,
        RunRequest(
            input={"data": {}},
            responses=[SampleResponse(method="GET", url=f"{BASE}/orders", body=[{"id": 1}])],
            credentials={"api": {"baseUrl": BASE}},
        ),
        run_id="stand-in",
    )
    assert run.status == "succeeded", run.summary
    assert [(s.key, s.adaptor, s.pinned, s.ran) for s in run.stand_ins] == [
        ("fetch", "@openfn/language-http", http.version, http.installed)
    ]
    assert (
        f"pins @openfn/language-http@{http.version}, which is not installed here: "
        f"it ran with {http.installed}"
    ) in run.summary
