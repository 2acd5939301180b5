"""Issue 13's "done when", proven against OpenFn itself: a spec with four processes
(the offline format, ``tests/agents/offline/specs/four_processes.md``) becomes a
reviewed plan and four valid workflows in one project, exported as one
``project.yaml`` that ``@openfn/project`` loads, and the hand-offs between them run
in ``@openfn/runtime``.

All of it goes through the real service in-process, as a user would (SQLite, the
in-process bus, the OFFLINE model: no scripted model, no API key):

1. ``POST /v1/projects`` (empty), ``POST /v1/sessions {project_id}`` (a project
   session), the spec sent as a ``turn`` with ``"mode": "plan"`` -> ``plan.proposed``;
2. the socket is closed mid-review; ``GET /v1/sessions/{id}`` shows the pending plan
   (the reload); a new socket approves it;
3. ``plan.progress`` up to ``turn.completed``: four workflows built leaf first;
4. ``GET /v1/projects/{id}/export?format=lightning`` loads with ``@openfn/project``;
5. each workflow's ``?format=cli`` export runs in ``@openfn/runtime`` with the real
   adaptors installed here (language-common, language-http). Intake runs first; the
   POSTs its hand-off steps make reach a loopback stand-in for Lightning's webhook
   endpoint, each is routed to the workflow whose webhook ``custom_path`` it names,
   as Lightning routes ``/i/<path>``, and that workflow runs with the body as its
   input. The scheduled Status report runs on its own.

Every adaptor the spec's workflows use (http and common) is installed here, so all
four workflows run; a step whose adaptor were missing would fail the test (a
``not_run`` status is never counted as a pass).

The Lightning stand-in accepts every POST. Real Lightning answers 403
``trigger_disabled`` on a disabled trigger, and new triggers start disabled (DESIGN
§2), so the receivers' webhooks must be enabled in Lightning before Intake's
hand-offs are accepted; nothing here enables them.

The service part is ``service_plan.plan_and_build``. Needs node and npm: without
them the fixtures fail (they never skip).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from agents.testrun.mock_http import MockHttp
from agents.testrun.runtime import RuntimeRun, run_cli_workflow
from tests.external.helpers import Arrival, LightningWebhooks, with_credentials
from tests.external.openfn_harness import expected_from_document, load_with_openfn
from tests.external.service_plan import Planned, plan_and_build
from tests.external.service_workflows import offline_service
from tests.tools.helpers import pinned
from tools.document import WorkflowDocument
from tools.document.validation import validate
from tools.jobcode import check_job_code
from tools.plan import ProjectPlan
from tools.plan.handoff import HANDOFF_CREDENTIAL
from tools.registry import default_context

pytestmark = pytest.mark.external

SPEC = (
    Path(__file__).resolve().parents[1] / "agents" / "offline" / "specs" / "four_processes.md"
).read_text(encoding="utf-8")
PROJECT_NAME = "Referrals"
PROJECT_SLUG = "referrals"

INTAKE, COVERAGE, DOCUMENTS, REPORT = (
    "intake",
    "coverage-check",
    "document-verification",
    "status-report",
)
KEYS = [INTAKE, COVERAGE, DOCUMENTS, REPORT]
NAMES = {
    INTAKE: "Intake",
    COVERAGE: "Coverage check",
    DOCUMENTS: "Document verification",
    REPORT: "Status report",
}
DEPENDS_ON = {INTAKE: [], COVERAGE: [INTAKE], DOCUMENTS: [INTAKE], REPORT: []}
STEPS = {
    INTAKE: ["Fetch referral from portal", "Validate required fields", "Save referral"],
    COVERAGE: [
        "Look up member insurance",
        "Check whether coverage is active",
        "Record coverage decision",
    ],
    DOCUMENTS: [
        "Fetch attached documents",
        "Verify documents are complete",
        "Record verification result",
    ],
    REPORT: [
        "Fetch open referrals",
        "Summarise referrals by status",
        "Post summary to team channel",
    ],
}
"""Each workflow's steps as built from its spec section, in run order."""
WEBHOOK_PATHS = {COVERAGE: f"{PROJECT_SLUG}-{COVERAGE}", DOCUMENTS: f"{PROJECT_SLUG}-{DOCUMENTS}"}
"""The receiving workflows' webhook paths: ``webhook_path(project_slug, key)``."""
HAND_OFFS = {f"Hand off to {NAMES[k]}": WEBHOOK_PATHS[k] for k in (COVERAGE, DOCUMENTS)}

REFERRAL = {"id": "R-17", "member": "M-204", "documents": ["consent.pdf"]}
"""What the clinic portal answers Intake's fetch with: Intake's result, handed over."""


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planned]:
    with offline_service(tmp_path_factory.mktemp("plan-project")) as client:
        yield plan_and_build(client, SPEC, project_name=PROJECT_NAME)


# --------------------------------------------------------------------------- the review


def test_the_spec_is_proposed_as_four_workflows(planned: Planned) -> None:
    plan = ProjectPlan.model_validate(planned.proposal["plan"])
    assert [w.key for w in plan.workflows] == KEYS
    assert {w.key: w.name for w in plan.workflows} == NAMES
    assert {w.key: w.depends_on for w in plan.workflows} == DEPENDS_ON
    by_key = plan.by_key()
    assert by_key[REPORT].trigger.type == "cron"
    assert by_key[REPORT].trigger.cron_expression == "0 7 * * 1-5"  # every weekday at 7
    assert {k for k in KEYS if by_key[k].trigger.type == "webhook"} == {INTAKE, COVERAGE, DOCUMENTS}
    # Leaf first: every workflow after those it depends on.
    order = plan.order
    assert sorted(order) == sorted(KEYS)
    assert all(order.index(d) < order.index(k) for k in KEYS for d in DEPENDS_ON[k])
    # One hand-off per dependency, each to the receiver's webhook.
    assert {
        (c["source"], c["target"], c["webhook_path"]) for c in planned.proposal["contracts"]
    } == {
        (INTAKE, COVERAGE, WEBHOOK_PATHS[COVERAGE]),
        (INTAKE, DOCUMENTS, WEBHOOK_PATHS[DOCUMENTS]),
    }
    assert planned.proposal["revision"] >= 1 and planned.proposal["request_id"]


def test_the_plan_survives_a_reload_mid_review(planned: Planned) -> None:
    pending = planned.reloaded["pending_confirmation"]
    assert pending is not None, planned.reloaded
    assert pending["request_id"] == planned.proposal["request_id"]
    assert pending["turn_id"] == planned.proposal["turn_id"]
    # Frames leave out nulls, REST keeps them: the same plan either way.
    assert ProjectPlan.model_validate(pending["plan"]["plan"]) == ProjectPlan.model_validate(
        planned.proposal["plan"]
    )
    # Frames leave out null fields (a contract's reviewer, for a webhook hand-off); REST
    # states them: the same contracts either way.
    stored = [{k: v for k, v in c.items() if v is not None} for c in pending["plan"]["contracts"]]
    assert stored == planned.proposal["contracts"]
    assert pending["plan"]["revision"] == planned.proposal["revision"]
    assert planned.reloaded["workflow"] is None
    assert [t["status"] for t in planned.reloaded["turns"]] == ["paused"]
    assert planned.reloaded["messages"][0]["content"] == SPEC
    # Nothing is built before the approval.
    assert planned.project_in_review["plan"]["status"] == "proposed"
    assert planned.project_in_review["workflows"] == []


# --------------------------------------------------------------------------- the build


def test_approval_builds_four_valid_workflows_leaf_first(planned: Planned) -> None:
    order = planned.proposal["plan"]["order"]
    progress = [
        (f["workflow_key"], f["status"]) for f in planned.build if f["type"] == "plan.progress"
    ]
    assert progress == [(k, s) for k in order for s in ("building", "built")]
    ids = planned.ids
    # The four workflows are the project's and the plan knows which is which.
    listed = {w["id"]: w for w in planned.project["workflows"]}
    assert set(listed) == set(ids.values()) and len(listed) == 4
    assert {listed[ids[k]]["name"] for k in KEYS} == set(NAMES.values())
    catalogue = default_context().catalogue
    for key, text in planned.documents.items():  # valid: the document rules and the code rules
        structure = WorkflowDocument.from_yaml(text).structure
        # A step needing a baseUrl from a credential is a note for the project's
        # credentials, not a problem of the workflow.
        assert [p for p in validate(structure, catalogue) if not p.once] == [], key
        for job in structure.jobs.values():
            assert job.body and check_job_code(job.body, catalogue.get(job.adaptor)) == [], job
    record = planned.project["plan"]
    assert record["status"] == "built"
    assert {k: o["workflow_id"] for k, o in record["workflows"].items()} == ids
    # Every workflow frame carries its workflow's id and a stored version; each
    # workflow's current version is its last one.
    frames = [f for f in planned.build if f["type"] == "workflow"]
    assert {f["workflow_id"] for f in frames} == set(ids.values())
    for wid, stored in planned.versions.items():
        shown = [f["version"] for f in frames if f["workflow_id"] == wid]
        assert shown and set(shown) <= set(stored)
        assert listed[wid]["version"] == max(stored) == max(shown)
    done = planned.build[-1]
    assert done["type"] == "turn.completed"
    reply = next(f["text"] for f in reversed(planned.build) if f["type"] == "message")
    assert "Built 4 of 4 workflows" in reply
    assert planned.session["pending_confirmation"] is None
    (answer,) = planned.session["confirmations"]
    assert answer["approved"] is True


# --------------------------------------------------------------------------- project.yaml


def test_the_project_yaml_loads_with_openfn_project(planned: Planned, openfn_cache: Path) -> None:
    ours = YAML(typ="safe", pure=True).load(planned.lightning)
    assert ours["name"] == PROJECT_NAME and list(ours["workflows"]) == KEYS
    loaded = load_with_openfn(planned.lightning, openfn_cache, spec=True)
    assert [wf["id"] for wf in loaded["workflows"]] == KEYS
    by_id = {wf["id"]: wf for wf in loaded["workflows"]}
    for key in KEYS:
        # Every step, edge and condition, as the stored document says.
        assert by_id[key]["steps"] == expected_from_document(planned.documents[key])["steps"]
        names = [s.get("name") for s in by_id[key]["steps"] if s["kind"] == "job"]
        assert names[: len(STEPS[key])] == STEPS[key]

    intake = {s["id"]: s for s in by_id[INTAKE]["steps"]}
    hand_offs = {s["name"]: s for s in intake.values() if s.get("name") in HAND_OFFS}
    assert set(hand_offs) == set(HAND_OFFS)
    for name, path in HAND_OFFS.items():
        step = hand_offs[name]
        assert step["adaptor"] == pinned("http")
        assert step["extra"] == {"configuration": HANDOFF_CREDENTIAL}
        assert f"post('/i/{path}'," in step["expression"]
        assert step["next"] == {}
    # Both hand-offs run on Intake's success, after its last step.
    assert intake["save-referral"]["next"] == {
        step["id"]: {"condition": "on_job_success", "disabled": False, "label": None}
        for step in hand_offs.values()
    }
    for key, path in WEBHOOK_PATHS.items():
        assert by_id[key]["start"] == "webhook"
        webhook = next(s for s in by_id[key]["steps"] if s["id"] == "webhook")
        assert webhook["extra"] == {"custom_path": path}
    assert by_id[REPORT]["start"] == "cron"
    assert by_id[REPORT]["steps"][0]["cron_expression"] == "0 7 * * 1-5"
    # Only Intake hands anything off.
    for key in (COVERAGE, DOCUMENTS, REPORT):
        assert not any(s.get("name", "").startswith("Hand off") for s in by_id[key]["steps"])

    # The package's own project.yaml (what `openfn deploy` sends) keeps the hand-offs.
    spec = YAML(typ="safe", pure=True).load(loaded["spec_yaml"])
    jobs = spec["workflows"][INTAKE]["jobs"]
    assert {j["name"] for j in jobs.values() if j.get("credential") == HANDOFF_CREDENTIAL} == set(
        HAND_OFFS
    )
    for key, path in WEBHOOK_PATHS.items():
        assert spec["workflows"][key]["triggers"]["webhook"]["custom_path"] == path


# --------------------------------------------------------------------------- the runs


def _names(plan: dict[str, Any], ran: RuntimeRun) -> list[str]:
    names = {s["id"]: s["name"] for s in plan["steps"] if "expression" in s}
    return [names.get(step, step) for step in ran.path]


def _assert_clean(ran: RuntimeRun) -> None:
    # `not_run` (an adaptor missing here) is a failure, never a pass.
    assert ran.status == "ran", (ran.status, ran.not_installed, ran.compile_errors, ran.crash)
    assert ran.problems() == [] and ran.errors == {} and ran.not_installed == {}, ran


def _receiver(cli: dict[str, dict[str, Any]], path: str) -> str:
    """The workflow Lightning would start for a POST on ``path``: the one whose
    webhook trigger's ``custom_path`` is ``/i/<custom_path>``."""
    found = [
        key
        for key, plan in cli.items()
        for step in plan["steps"]
        if step.get("type") == "webhook" and f"/i/{step.get('custom_path')}" == path
    ]
    assert len(found) == 1, (path, found)
    return found[0]


@dataclass(frozen=True)
class Chain:
    intake: RuntimeRun
    arrivals: list[Arrival]
    api: list[tuple[str, str]]
    downstream: dict[str, tuple[RuntimeRun, list[tuple[str, str, Any]]]]
    """Receiver key -> its run and the requests it made of its API."""


@pytest.fixture(scope="module")
def chain(planned: Planned, runtime_root: Path) -> Chain:
    """Intake runs; each hand-off it POSTs starts the workflow its path names."""
    with MockHttp(default=REFERRAL) as portal, LightningWebhooks() as lightning:
        plan = with_credentials(
            planned.cli[INTAKE], {HANDOFF_CREDENTIAL: {"baseUrl": lightning.base_url}}
        )
        intake = run_cli_workflow(
            plan, mock=portal, state={"data": {"referral_id": "R-17"}}, cache_dir=runtime_root
        )
    downstream = {}
    for arrival in lightning.arrivals:
        key = _receiver(planned.cli, arrival.path)
        with MockHttp(default={"active": True, "complete": True}) as api:
            ran = run_cli_workflow(
                planned.cli[key], mock=api, state={"data": arrival.body}, cache_dir=runtime_root
            )
        downstream[key] = (ran, [(r.method, r.path, r.body) for r in api.requests])
    return Chain(
        intake=intake,
        arrivals=list(lightning.arrivals),
        api=[(r.method, r.path) for r in portal.requests],
        downstream=downstream,
    )


def test_intake_runs_and_hands_its_result_to_both_webhooks(planned: Planned, chain: Chain) -> None:
    _assert_clean(chain.intake)
    names = _names(planned.cli[INTAKE], chain.intake)
    assert names[:3] == STEPS[INTAKE] and sorted(names[3:]) == sorted(HAND_OFFS)
    # One POST per hand-off, on Lightning (the hand-off credential's baseUrl), with
    # Intake's result as JSON; the portal (every other step's baseUrl) saw only the fetch.
    assert sorted(chain.arrivals, key=lambda a: a.path) == [
        Arrival("POST", f"/i/{path}", "application/json", REFERRAL)
        for path in sorted(HAND_OFFS.values())
    ]
    assert [method for method, _ in chain.api] == ["GET"]


@pytest.mark.parametrize("key", [COVERAGE, DOCUMENTS])
def test_each_receiver_runs_on_what_intake_handed_over(
    planned: Planned, chain: Chain, key: str
) -> None:
    assert key in chain.downstream, f"nothing reached {key}'s webhook: {chain.arrivals}"
    ran, requests = chain.downstream[key]
    _assert_clean(ran)
    assert _names(planned.cli[key], ran) == STEPS[key]
    # Its first step's fetch keeps its input as a reference, as language-common's
    # state does: the run started on the handed-over referral.
    final = ran.final
    assert isinstance(final, dict), final
    assert final.get("references") == [REFERRAL], json.dumps(final)[:2000]
    assert [method for method, _, _ in requests] == ["GET"]


def test_the_scheduled_report_runs_alone_and_hands_nothing_off(
    planned: Planned, runtime_root: Path
) -> None:
    summary = {"open": 3}
    with MockHttp(default=summary) as api, LightningWebhooks() as lightning:
        ran = run_cli_workflow(planned.cli[REPORT], mock=api, cache_dir=runtime_root)
    _assert_clean(ran)
    assert _names(planned.cli[REPORT], ran) == STEPS[REPORT]
    assert [(r.method, r.body) for r in api.requests] == [("GET", None), ("POST", summary)]
    assert lightning.arrivals == []
