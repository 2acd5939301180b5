"""Proof against OpenFn itself: a plan's hand-off (``tools.plan.handoff``) works in
``@openfn/runtime`` and survives the Lightning ``project.yaml`` export.

Two workflows of one plan, built as documents through the real tools:

* A, "Referral intake": webhook -> *Normalise referral* (common ``fn``), and on its
  failure -> *Log rejected referral*;
* B, "Coverage check" (``depends_on: [intake]``): webhook -> *Check coverage*
  (language-http ``post`` to the coverage API).

The plan's contract A -> B is applied with :func:`handoff_calls` (on A) and
:func:`receiving_calls` (on B); both are exported with ``to_cli_workflow`` and run
by the pinned runtime with the real language-common and language-http.

Lightning is played by a loopback server that answers like a webhook trigger
(``{"work_order_id": ...}``) and records what arrives. The hand-off step's
credential *name* (``lightning-webhooks``) is resolved through a credential map,
as ``@openfn/cli`` resolves a step's ``configuration`` string, to ``{baseUrl:
<that server>}``; every other step gets ``run.mjs``'s global ``baseUrl`` (the
``MockHttp`` API server). So a POST on the Lightning server proves the step ran
with its own credential, and nothing reaching the API server proves it did not
use the global one. B then runs with the body Lightning received as its input
``state.data``, which is what Lightning's webhook hands a run.

Needs node and npm: without them the fixtures fail (they never skip).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from agents.testrun.mock_http import MockHttp
from agents.testrun.runtime import RuntimeRun, run_cli_workflow
from tests.external.helpers import Arrival, LightningWebhooks, with_credentials
from tests.external.openfn_harness import load_with_openfn
from tests.tools.helpers import make_context, pinned
from tools.base import ToolContext
from tools.document import WorkflowDocument
from tools.document.openfn.cli import to_cli_workflow
from tools.document.openfn.formats import export_project
from tools.plan import Contract, ProjectPlan, contracts
from tools.plan.handoff import (
    HANDOFF_CREDENTIAL,
    ToolCall,
    apply_calls,
    find_handoff,
    handoff_calls,
    receiving_calls,
)

pytestmark = pytest.mark.external

PLAN = ProjectPlan.model_validate(
    {
        "summary": "Referrals are taken in and normalised; then their coverage is checked.",
        "workflows": [
            {
                "key": "intake",
                "name": "Referral intake",
                "purpose": "Take a referral in and normalise it.",
                "trigger": {"type": "webhook"},
                "outputs": ["referral"],
            },
            {
                "key": "coverage",
                "name": "Coverage check",
                "purpose": "Check the normalised referral's coverage.",
                "trigger": {"type": "webhook"},
                "inputs": ["referral"],
                "depends_on": ["intake"],
            },
        ],
        "order": ["intake", "coverage"],
    }
)
PROJECT_SLUG = "acme"

NORMALISE = "Normalise referral"
LOG_REJECTED = "Log rejected referral"
CHECK = "Check coverage"
HAND_OFF = "Hand off to Coverage check"

REFERRAL = {"id": "R-17", "patient": " ada lovelace ", "priority": "high"}
NORMALISED = {"referralId": "R-17", "patient": "ADA LOVELACE", "urgent": True}
"""What Normalise referral makes of REFERRAL: what A hands to B."""

NORMALISE_CODE = """\
// Normalise the incoming referral for the coverage check.
fn(state => ({
  ...state,
  data: {
    referralId: state.data.id,
    patient: state.data.patient.trim().toUpperCase(),
    urgent: state.data.priority === 'high',
  },
}));"""
LOG_CODE = "fn(state => ({ ...state, data: { rejected: true } }));"
CHECK_CODE = "post('/coverage-checks', state => JSON.stringify(state.data));"


# --------------------------------------------------------------------------- the plan


def _build(ctx: ToolContext, calls: list[ToolCall]) -> WorkflowDocument:
    doc = WorkflowDocument.new()
    results = apply_calls(doc, calls, context=ctx)
    assert [r.ok for r in results] == [True] * len(calls), [r.text for r in results]
    return doc


def _code(key: str, code: str) -> ToolCall:
    return ("edit_job_code", {"job_key": key, "edits": [{"action": "rewrite", "new_code": code}]})


@dataclass(frozen=True)
class Built:
    contract: Contract
    a: WorkflowDocument
    b: WorkflowDocument


@pytest.fixture(scope="module")
def built() -> Built:
    (contract,) = contracts(PLAN, PROJECT_SLUG)
    ctx = make_context()
    a = _build(
        ctx,
        [
            (
                "create_workflow",
                {
                    "name": "Referral intake",
                    "jobs": [
                        {"name": NORMALISE, "adaptor": "common"},
                        {"name": LOG_REJECTED, "adaptor": "common"},
                    ],
                    "edges": [
                        {
                            "source": "normalise-referral",
                            "target": "log-rejected-referral",
                            "condition_type": "on_job_failure",
                        }
                    ],
                    "trigger": {"type": "webhook"},
                },
            ),
            _code("normalise-referral", NORMALISE_CODE),
            _code("log-rejected-referral", LOG_CODE),
        ],
    )
    b = _build(
        ctx,
        [
            (
                "create_workflow",
                {
                    "name": "Coverage check",
                    "jobs": [{"name": CHECK, "adaptor": "http"}],
                    "trigger": {"type": "webhook"},
                },
            ),
            _code("check-coverage", CHECK_CODE),
        ],
    )
    by_key = PLAN.by_key()
    for doc, calls in (
        (b, receiving_calls(b.structure, contract)),
        (a, handoff_calls(a.structure, contract, by_key[contract.target].name)),
    ):
        results = apply_calls(doc, calls, context=ctx)
        assert calls and all(r.ok for r in results), [r.text for r in results]
    return Built(contract, a, b)


def _names(plan: dict[str, Any], run: RuntimeRun) -> list[str]:
    names = {s["id"]: s["name"] for s in plan["steps"] if "expression" in s}
    return [names.get(step, step) for step in run.path]


def _step_id(plan: dict[str, Any], name: str) -> str:
    return next(s["id"] for s in plan["steps"] if s.get("name") == name)


@pytest.fixture(scope="module")
def handed_off(built: Built, runtime_root: Path) -> Iterator[tuple[RuntimeRun, list[Arrival]]]:
    """A's successful run: what the runtime did and what reached Lightning."""
    with MockHttp() as api, LightningWebhooks() as lightning:
        plan = with_credentials(
            to_cli_workflow(built.a), {HANDOFF_CREDENTIAL: {"baseUrl": lightning.base_url}}
        )
        ran = run_cli_workflow(plan, mock=api, state={"data": REFERRAL}, cache_dir=runtime_root)
        # The API server is every other step's baseUrl: the hand-off must not go there.
        assert api.requests == []
    yield ran, list(lightning.arrivals)


# --------------------------------------------------------------------------- the runs


def test_a_hands_its_result_to_bs_webhook_once(
    built: Built, handed_off: tuple[RuntimeRun, list[Arrival]]
) -> None:
    ran, arrivals = handed_off
    assert ran.status == "ran", (ran.compile_errors, ran.not_installed, ran.crash)
    assert ran.problems() == []
    assert _names(to_cli_workflow(built.a), ran) == [NORMALISE, HAND_OFF]
    assert ran.errors == {}
    # B's exported webhook path is where A posted: the two exports agree, not just the contract.
    b_trigger = to_cli_workflow(built.b)["steps"][0]
    assert (b_trigger["type"], b_trigger["custom_path"]) == ("webhook", "acme-coverage")
    assert arrivals == [Arrival("POST", "/i/acme-coverage", "application/json", NORMALISED)]
    # Lightning's answer is the hand-off step's result, as any HTTP step's is.
    assert ran.final["data"] == {"work_order_id": "wo-1"}


def test_b_runs_on_what_a_handed_over(
    built: Built, handed_off: tuple[RuntimeRun, list[Arrival]], runtime_root: Path
) -> None:
    (arrival,) = handed_off[1]
    plan = to_cli_workflow(built.b)
    with MockHttp(default={"covered": True}) as api:
        ran = run_cli_workflow(plan, mock=api, state={"data": arrival.body}, cache_dir=runtime_root)
    assert ran.status == "ran", (ran.compile_errors, ran.not_installed, ran.crash)
    assert ran.problems() == []
    assert _names(plan, ran) == [CHECK]
    assert [(r.method, r.path, r.body) for r in api.requests] == [
        ("POST", "/coverage-checks", NORMALISED)
    ]


def test_a_failed_run_does_not_hand_off(built: Built, runtime_root: Path) -> None:
    """Normalise fails: its failure handler runs and nothing reaches B's webhook."""
    with MockHttp() as api, LightningWebhooks() as lightning:
        plan = with_credentials(
            to_cli_workflow(built.a), {HANDOFF_CREDENTIAL: {"baseUrl": lightning.base_url}}
        )
        normalise = _step_id(plan, NORMALISE)
        ran = run_cli_workflow(
            plan,
            mock=api,
            state={"data": REFERRAL},
            inject_failures={normalise: "forced failure"},
            cache_dir=runtime_root,
        )
    assert ran.status == "ran", (ran.compile_errors, ran.crash)
    assert _names(plan, ran) == [NORMALISE, LOG_REJECTED]
    assert list(ran.errors) == [normalise]
    assert lightning.arrivals == [] and api.requests == []


def test_rebuilding_the_plan_adds_no_second_hand_off(built: Built) -> None:
    for doc in (built.a, WorkflowDocument.from_yaml(built.a.to_yaml())):
        assert handoff_calls(doc.structure, built.contract, "Coverage check") == []
    assert receiving_calls(built.b.structure, built.contract) == []
    assert (
        find_handoff(built.a.structure, built.contract.webhook_path) == "hand-off-to-coverage-check"
    )


# --------------------------------------------------------------------------- project.yaml


def test_the_lightning_project_keeps_the_hand_off(built: Built, openfn_cache: Path) -> None:
    exported = export_project([built.a, built.b], name="Acme referrals")
    loaded = load_with_openfn(exported.text, openfn_cache, spec=True)
    by_id = {wf["id"]: {s["id"]: s for s in wf["steps"]} for wf in loaded["workflows"]}
    assert set(by_id) == {"referral-intake", "coverage-check"}

    a = by_id["referral-intake"]
    hand_off = a["hand-off-to-coverage-check"]
    assert hand_off["name"] == HAND_OFF
    assert hand_off["adaptor"] == pinned("http")
    assert hand_off["extra"] == {"configuration": HANDOFF_CREDENTIAL}
    assert (
        "post('/i/acme-coverage', state => JSON.stringify(state.data ?? {}));"
        in (hand_off["expression"])
    )
    assert a["normalise-referral"]["next"] == {
        "log-rejected-referral": {"condition": "on_job_failure", "disabled": False, "label": None},
        "hand-off-to-coverage-check": {
            "condition": "on_job_success",
            "disabled": False,
            "label": None,
        },
    }
    webhook = by_id["coverage-check"]["webhook"]
    assert webhook["extra"] == {"custom_path": "acme-coverage"}

    # The package's own project.yaml (what `openfn deploy` sends) keeps them too.
    spec = YAML(typ="safe", pure=True).load(loaded["spec_yaml"])
    a_spec, b_spec = spec["workflows"]["referral-intake"], spec["workflows"]["coverage-check"]
    assert a_spec["jobs"]["hand-off-to-coverage-check"]["credential"] == HANDOFF_CREDENTIAL
    assert b_spec["triggers"]["webhook"]["custom_path"] == "acme-coverage"


def test_a_list_result_is_handed_over_as_a_json_array(built: Built, runtime_root: Path) -> None:
    """A batch (an array in ``state.data``) arrives as the same JSON array: the step posts
    a JSON string, which language-common's encoder passes through for arrays too."""
    ctx = make_context(200)
    batch = [{"id": "R-1"}, {"id": "R-2"}]
    doc = _build(
        ctx,
        [
            (
                "create_workflow",
                {
                    "name": "Batch intake",
                    "jobs": [{"name": "Collect referrals", "adaptor": "common"}],
                    "trigger": {"type": "webhook"},
                },
            ),
            _code("collect-referrals", "fn(state => ({ ...state, data: state.data.referrals }));"),
        ],
    )
    results = apply_calls(
        doc, handoff_calls(doc.structure, built.contract, "Coverage check"), context=ctx
    )
    assert all(r.ok for r in results), [r.text for r in results]
    with MockHttp() as api, LightningWebhooks() as lightning:
        plan = with_credentials(
            to_cli_workflow(doc), {HANDOFF_CREDENTIAL: {"baseUrl": lightning.base_url}}
        )
        ran = run_cli_workflow(
            plan, mock=api, state={"data": {"referrals": batch}}, cache_dir=runtime_root
        )
    assert ran.status == "ran" and ran.problems() == [] and ran.errors == {}, ran
    assert _names(plan, ran) == ["Collect referrals", HAND_OFF]
    assert lightning.arrivals == [Arrival("POST", "/i/acme-coverage", "application/json", batch)]
