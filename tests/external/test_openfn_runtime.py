"""Proof against OpenFn itself: workflows built through the service run in ``@openfn/runtime``.

Each workflow below is built the way a user builds it: the real app with the
offline model (no API key), a chat turn describing it, a turn asking for code
for all steps (``service_workflows.build_workflow``). It is exported through
the service as a CLI ``workflow.json`` (``GET /v1/workflows/{id}/export?format=cli``) and
executed by the pinned ``@openfn/runtime`` 1.9.5 with the real
``@openfn/language-common`` and ``@openfn/language-http`` against ``MockHttp``
on loopback (``agents.testrun.runtime``; node refuses every other host).

``@openfn/compiler`` and ``@openfn/cli`` are not on the npm registry here, so
``agents/testrun/node/compile.mjs`` turns each job body into the
module the runtime takes, for exactly this subset (anything else is a compile
error reported as "not run", never guessed):

* the body parses as an ES module; every top-level statement is a call
  expression statement (``get('x');``, ``fn(state => ...);``, ``http.post(...)``),
  plus comments and empty statements; no top-level declarations, imports,
  exports or ``.then()`` chains;
* lazy state: an argument of a top-level call using ``$`` outside any nested
  function becomes ``(state) => <argument with $ -> state>``;
* every identifier the body references, declares nowhere and an adaptor of the
  step exports is imported by name, plus ``export * from '<first adaptor>'``;
  the default export is the array of the top-level calls, in order.

For every workflow the test asserts the steps that run (in order) on success,
on forced failures, and on each side of every condition. The expected paths
are what the request means (hand-written here), not what the generator wrote.
A forced failure is either the real adaptor failing on an HTTP 500 from the
mock, or (for a step whose code makes no HTTP call) an operation appended to
that step's compiled operations that throws; the step's own code runs first.

Needs node and npm: without them the fixture fails (it never skips).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from agents.testrun.mock_http import MockHttp
from agents.testrun.runtime import RuntimeRun, run_cli_workflow
from tests.external.service_workflows import build_workflow, offline_service

pytestmark = pytest.mark.external

CODE_FOR_ALL = "write code for all steps"

WORKFLOWS: dict[str, list[str]] = {
    # A JS branch with an "otherwise" side, both arms joining in one step.
    "referral-intake": [
        "Create a workflow called Referral intake:\n"
        "1. Get the referral from the referral API\n"
        "2. Check the insurance\n"
        "3. If the plan is BlueCross HMO, submit a prior-auth request through the payer portal\n"
        "4. Otherwise verify the coverage is active\n"
        "5. Attach the clinical documents",
        CODE_FOR_ALL,
    ],
    # A failure edge, on a cron trigger.
    "order-sync": [
        "Create a workflow called Order sync:\n"
        "1) Get orders from the shop API\n"
        "2) Save them through the warehouse API\n"
        "3) If that fails, notify the ops team through the alerts API\n"
        "4) Send a confirmation through the messaging API",
        "run it every day at 7",
        CODE_FOR_ALL,
    ],
    # A failure edge and its "otherwise" (success) side from a step with no HTTP call.
    "lab-results": [
        "when a lab result arrives, parse it, if it fails alert the lab team through the "
        "alerts API, otherwise store it through the lab API",
        CODE_FOR_ALL,
    ],
    # A numeric JS branch from an HTTP step, with the negated edge.
    "invoice-approval": [
        "Create a workflow called Invoice approval:\n"
        "1. Get the invoice from the billing API\n"
        "2. If the total is over 1000, send it for approval through the approvals API\n"
        "3. Otherwise post it to the ledger API",
        CODE_FOR_ALL,
    ],
}


@dataclass(frozen=True)
class Case:
    workflow: str
    name: str
    path: list[str]
    """Step display names in the order they must start."""
    data: Any = field(default_factory=dict)
    """What the mock answers every request with (and the input ``state.data``)."""
    fail_http: bool = False
    """The mock answers 500 to everything: the first HTTP call fails in the adaptor."""
    inject: str | None = None
    """Display name of a step made to fail after its own operations ran."""
    failed: list[str] = field(default_factory=list)
    """Display names of the steps that must end in ``state.errors``."""
    wrong: str | None = None
    """Why the generated workflow takes another path today (a finding: the case is
    marked xfail(strict=True) with this reason, so a fix makes it fail until unmarked)."""


REFERRAL = "referral-intake"
GET_REFERRAL = "Get referral from referral API"
CHECK = "Check insurance"
PRIOR_AUTH = "Submit prior-auth request through payer portal"
VERIFY = "Verify coverage is active"
ATTACH = "Attach clinical documents"
BLUE = {"id": "R-1", "plan": "BlueCross HMO"}
AETNA = {"id": "R-2", "plan": "Aetna PPO"}

ORDERS = "order-sync"
GET_ORDERS = "Get orders from shop API"
SAVE = "Save orders through warehouse API"
NOTIFY = "Notify ops team through alerts API"
CONFIRM = "Send confirmation through messaging API"

LAB = "lab-results"
PARSE = "Parse lab result"
ALERT = "Alert lab team through alerts API"
STORE = "Store lab result through lab API"

INVOICE = "invoice-approval"
GET_INVOICE = "Get invoice from billing API"
APPROVAL = "Send invoice for approval through approvals API"
LEDGER = "Post invoice to ledger API"

# Findings (why a generated workflow takes another path than asked) go in `Case.wrong`.
# The last one, an array of orders POSTed as `state => state.data` (language-common's
# encoder hands an iterable body to undici unencoded), is fixed: http bodies are JSON.

CASES = [
    Case(
        REFERRAL,
        "blue-side",
        [GET_REFERRAL, CHECK, PRIOR_AUTH, ATTACH],
        BLUE,
    ),
    Case(
        REFERRAL,
        "otherwise-side",
        [GET_REFERRAL, CHECK, VERIFY, ATTACH],
        AETNA,
    ),
    Case(REFERRAL, "first-step-http-500", [GET_REFERRAL], BLUE, True, failed=[GET_REFERRAL]),
    Case(
        REFERRAL,
        "check-fails-blue",
        [GET_REFERRAL, CHECK],
        BLUE,
        inject=CHECK,
        failed=[CHECK],
    ),
    Case(
        REFERRAL,
        "check-fails-otherwise",
        [GET_REFERRAL, CHECK],
        AETNA,
        inject=CHECK,
        failed=[CHECK],
    ),
    Case(
        REFERRAL,
        "prior-auth-fails",
        [GET_REFERRAL, CHECK, PRIOR_AUTH],
        BLUE,
        inject=PRIOR_AUTH,
        failed=[PRIOR_AUTH],
    ),
    Case(
        REFERRAL,
        "verify-fails",
        [GET_REFERRAL, CHECK, VERIFY],
        AETNA,
        inject=VERIFY,
        failed=[VERIFY],
    ),
    Case(ORDERS, "success", [GET_ORDERS, SAVE, CONFIRM], [{"id": 1}]),
    Case(
        ORDERS,
        "save-fails",
        [GET_ORDERS, SAVE, NOTIFY],
        [{"id": 1}],
        inject=SAVE,
        failed=[SAVE],
    ),
    Case(ORDERS, "first-step-http-500", [GET_ORDERS], [{"id": 1}], True, failed=[GET_ORDERS]),
    Case(LAB, "success", [PARSE, STORE], {"result": "positive"}),
    Case(LAB, "parse-fails", [PARSE, ALERT], {"result": "positive"}, inject=PARSE, failed=[PARSE]),
    Case(LAB, "store-http-500", [PARSE, STORE], {"result": "positive"}, True, failed=[STORE]),
    Case(INVOICE, "over-1000", [GET_INVOICE, APPROVAL], {"total": 5000}),
    Case(INVOICE, "exactly-1000", [GET_INVOICE, LEDGER], {"total": 1000}),
    Case(INVOICE, "under-1000", [GET_INVOICE, LEDGER], {"total": 10}),
    Case(
        INVOICE,
        "first-step-http-500",
        [GET_INVOICE],
        {"total": 10},
        True,
        failed=[GET_INVOICE],
    ),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Any]]]:
    """Every workflow in WORKFLOWS, built through the service, with its CLI export."""
    out: dict[str, dict[str, Any]] = {}
    with offline_service(tmp_path_factory.mktemp("runtime-service")) as client:
        for key, turns in WORKFLOWS.items():
            out[key] = build_workflow(client, turns)
    yield out


def _ids_by_name(plan: dict[str, Any]) -> dict[str, str]:
    return {s["name"]: s["id"] for s in plan["steps"] if "expression" in s}


def test_every_workflow_has_the_shape_it_was_asked_for(built: dict[str, dict[str, Any]]) -> None:
    """The paths below name steps by display name: every one of them exists, has code
    written for it, and the triggers are the ones asked for."""
    for key, workflow in built.items():
        plan = workflow["plan"]
        names = _ids_by_name(plan)
        wanted = {n for case in CASES if case.workflow == key for n in case.path}
        assert wanted <= set(names), (key, sorted(names))
        for step in plan["steps"]:
            if "expression" in step:
                assert "starter code" in step["expression"], (key, step["id"])
        triggers = [s for s in plan["steps"] if "expression" not in s]
        assert [t["id"] for t in triggers] == (["cron"] if key == ORDERS else ["webhook"])
        assert plan["start"] == triggers[0]["id"]


def _params(cases: list[Case]) -> list[Any]:
    return [
        pytest.param(
            c,
            id=f"{c.workflow}:{c.name}",
            marks=[pytest.mark.xfail(strict=True, reason=c.wrong)] if c.wrong else [],
        )
        for c in cases
    ]


# (workflow, case name) -> (run, mock): both tests below read the same run of a case.
_RUNS: dict[tuple[str, str], tuple[RuntimeRun, MockHttp]] = {}


def _run(case: Case, built: dict[str, dict[str, Any]], runtime_root: Path) -> Any:
    plan = built[case.workflow]["plan"]
    ids = _ids_by_name(plan)
    if (case.workflow, case.name) not in _RUNS:
        inject = {ids[case.inject]: "forced failure"} if case.inject else {}
        with MockHttp(default=case.data, fail_all=case.fail_http) as mock:
            ran = run_cli_workflow(
                plan,
                mock=mock,
                state={"data": case.data},
                inject_failures=inject,
                cache_dir=runtime_root,
            )
        _RUNS[case.workflow, case.name] = (ran, mock)
    result, mock = _RUNS[case.workflow, case.name]
    assert result.status == "ran", (result.compile_errors, result.not_installed, result.crash)
    assert result.problems() == []
    names = {v: k for k, v in ids.items()}
    return result, mock, names


@pytest.mark.parametrize("case", _params(CASES))
def test_the_path_openfn_takes_is_the_one_asked_for(
    case: Case, built: dict[str, dict[str, Any]], runtime_root: Path
) -> None:
    result, _, names = _run(case, built, runtime_root)
    taken = [names.get(step, step) for step in result.path]
    assert taken == case.path, (result.errors, built[case.workflow]["yaml"])
    assert sorted(names[s] for s in result.errors) == sorted(case.failed), result.errors


# The success cases whose path writes -> why the write is wrong today (None: right).
WRITE_CASES: dict[tuple[str, str], str | None] = {
    (REFERRAL, "blue-side"): None,
    (ORDERS, "success"): None,
    (LAB, "success"): None,
    (INVOICE, "over-1000"): None,
    (INVOICE, "exactly-1000"): None,
    (INVOICE, "under-1000"): None,
}


@pytest.mark.parametrize(
    "case",
    _params(
        [
            replace(c, wrong=WRITE_CASES[(c.workflow, c.name)])
            for c in CASES
            if (c.workflow, c.name) in WRITE_CASES
        ]
    ),
)
def test_every_write_sends_the_record_the_step_received(
    case: Case, built: dict[str, dict[str, Any]], runtime_root: Path
) -> None:
    """Payloads are functions of state: each POST/PUT/PATCH body is the record the
    mock served upstream (every answer is ``case.data``), in the same shape."""
    _, mock, _ = _run(case, built, runtime_root)
    writes = [r for r in mock.requests if r.method in ("POST", "PUT", "PATCH")]
    assert writes, "no step of this path writes anything"
    bodies = [r.body for r in writes]
    assert bodies == [case.data] * len(writes), [(r.method, r.path) for r in writes]
