"""The runtime harness itself, on hand-written CLI workflow.json fixtures.

``agents.testrun.runtime.run_cli_workflow`` executes a CLI workflow in the pinned
``@openfn/runtime`` (``agents/testrun/node/package.json``) with the
real ``@openfn/language-common`` and ``@openfn/language-http`` against
``MockHttp`` on loopback. These tests pin down what the harness reports (path,
errors, compile results, refused connections) so that the tests on workflows
built through the service (``test_openfn_runtime.py``) can trust it.

Needs node and npm: when they are missing the fixture fails (it never skips).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents.testrun.mock_http import MockHttp
from agents.testrun.runtime import RuntimeRun, run_cli_workflow

pytestmark = pytest.mark.external

HTTP = "@openfn/language-http@latest"
COMMON = "@openfn/language-common@latest"


def step(id_: str, adaptor: str | None, expression: str | None, **next_: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": id_}
    if expression is not None:
        out["adaptors"] = [adaptor]
        out["expression"] = expression
    if next_:
        out["next"] = {k.replace("_", "-"): v for k, v in next_.items()}
    return out


def on(condition: str) -> dict[str, Any]:
    return {"condition": condition, "disabled": False}


# A branch with both sides, a join, a failure edge: the shapes OpenFn evaluates.
BRANCHING = {
    "id": "branching",
    "start": "webhook",
    "steps": [
        step("webhook", None, None, fetch=on("always")),
        step(
            "fetch",
            HTTP,
            "get('referrals');",
            check=on("on_job_success"),
            report=on("on_job_failure"),
        ),
        step(
            "check",
            COMMON,
            "fn(state => state);",
            blue=on("!state.errors && state.data.plan === 'BlueCross HMO'"),
            other=on("!state.errors && state.data.plan !== 'BlueCross HMO'"),
        ),
        step("blue", HTTP, "post('prior-auth', $.data);", join=on("on_job_success")),
        step("other", COMMON, "fn(state => state);", join=on("on_job_success")),
        step("join", COMMON, "fn(state => ({ ...state, joined: true }));"),
        step("report", COMMON, "fn(state => state);"),
    ],
}


def run(
    plan: dict[str, Any],
    runtime_root: Path,
    *,
    data: Any = None,
    fail: set[str] | None = None,
    inject: dict[str, str] | None = None,
) -> tuple[RuntimeRun, MockHttp]:
    with MockHttp(default=data if data is not None else {}, fail=fail or set()) as mock:
        result = run_cli_workflow(plan, mock=mock, inject_failures=inject, cache_dir=runtime_root)
    return result, mock


@pytest.mark.parametrize(
    ("data", "fail", "inject", "path", "errors"),
    [
        ({"plan": "BlueCross HMO"}, set(), {}, ["fetch", "check", "blue", "join"], []),
        ({"plan": "Aetna"}, set(), {}, ["fetch", "check", "other", "join"], []),
        ({"plan": "Aetna"}, {"/referrals"}, {}, ["fetch", "report"], ["fetch"]),
        ({"plan": "Aetna"}, set(), {"check": "forced"}, ["fetch", "check"], ["check"]),
        ({"plan": "BlueCross HMO"}, {"/prior-auth"}, {}, ["fetch", "check", "blue"], ["blue"]),
    ],
    ids=["blue-side", "other-side", "http-500-takes-failure-edge", "guarded-js-edges", "no-join"],
)
def test_paths_follow_openfn_edge_semantics(
    runtime_root: Path,
    data: Any,
    fail: set[str],
    inject: dict[str, str],
    path: list[str],
    errors: list[str],
) -> None:
    result, _ = run(BRANCHING, runtime_root, data=data, fail=fail, inject=inject)
    assert result.status == "ran", result
    assert result.problems() == []
    assert result.path == path
    assert sorted(result.errors) == errors


def test_an_unguarded_js_edge_is_taken_after_its_source_failed(runtime_root: Path) -> None:
    """OpenFn's own rule (DESIGN §2a): a js_expression edge is evaluated on failure too."""
    plan = {
        "steps": [
            step("a", COMMON, "fn(state => state);", b=on("state.data.plan !== 'X'")),
            step("b", COMMON, "fn(state => state);"),
        ]
    }
    result, _ = run(plan, runtime_root, inject={"a": "boom"})
    assert result.path == ["a", "b"]
    assert result.errors == {"a": "JobError: boom"}


def test_a_join_reached_along_two_edges_runs_twice(runtime_root: Path) -> None:
    plan = {
        "steps": [
            step("a", COMMON, "fn(state => state);", b=on("always"), c=on("always")),
            step("b", COMMON, "fn(state => state);", d=on("on_job_success")),
            step("c", COMMON, "fn(state => state);", d=on("on_job_success")),
            step("d", COMMON, "fn(state => state);"),
        ]
    }
    result, _ = run(plan, runtime_root)
    assert result.counts == {"a": 1, "b": 1, "c": 1, "d": 2}


def test_the_compiler_imports_what_is_used_and_wraps_lazy_state(runtime_root: Path) -> None:
    result, mock = run(BRANCHING, runtime_root, data={"plan": "BlueCross HMO", "id": 7})
    assert result.compile["blue"]["imports"] == {"@openfn/language-http": ["post"]}
    assert result.compile["blue"]["operations"] == ["post('prior-auth', (state) => (state.data))"]
    assert result.compile["fetch"]["imports"] == {"@openfn/language-http": ["get"]}
    posted = [r for r in mock.requests if r.method == "POST"]
    expected = [("/prior-auth", {"plan": "BlueCross HMO", "id": 7})]
    assert [(r.path, r.body) for r in posted] == expected


def test_a_plan_wrapper_is_accepted_and_a_planwright_document_is_not(runtime_root: Path) -> None:
    wrapped, _ = run({"workflow": BRANCHING}, runtime_root, data={"plan": "Aetna"})
    assert wrapped.path == ["fetch", "check", "other", "join"]
    document = {"jobs": {"a": {"body": "fn(s => s)"}}, "edges": {}}
    invalid, _ = run(document, runtime_root)
    assert invalid.status == "invalid"
    assert invalid.crash is not None and "not a CLI workflow" in invalid.crash


@pytest.mark.parametrize(
    ("expression", "kind", "status"),
    [
        ("import { x } from 'y';\nfn(state => state);", "subset", "not_run"),
        # OpenFn's compiler refuses it too: the callback's parameter is not `state`.
        ("fn(s => $.data);", "syntax", "invalid"),
        ("fn(state => {\n  return state;\n);", "syntax", "invalid"),
    ],
    ids=["import", "lazy-state-in-a-callback-not-taking-state", "syntax-error"],
)
def test_code_outside_the_subset_is_not_run(
    runtime_root: Path, expression: str, kind: str, status: str
) -> None:
    plan = {"steps": [step("a", COMMON, expression)]}
    result, _ = run(plan, runtime_root)
    assert result.status == status
    assert result.compile_errors["a"]["kind"] == kind
    assert result.path == []


def test_an_adaptor_not_installed_here_is_not_run(runtime_root: Path) -> None:
    plan = {"steps": [step("a", "@openfn/language-dhis2@latest", "get('trackedEntityInstances');")]}
    result, _ = run(plan, runtime_root)
    assert result.status == "not_run"
    assert result.not_installed == {"a": ["@openfn/language-dhis2@latest"]}


def test_a_call_the_adaptor_does_not_export_is_reported_and_fails_the_step(
    runtime_root: Path,
) -> None:
    plan = {"steps": [step("a", HTTP, "sendMail('ops@example.org');")]}
    result, _ = run(plan, runtime_root)
    assert result.unknown_operations == {"a": ["sendMail"]}
    assert "a" in result.errors and "sendMail" in result.errors["a"]


def test_a_job_that_reaches_another_host_is_refused(runtime_root: Path) -> None:
    # language-common's http helpers take absolute URLs (language-http's refuse
    # an origin other than baseUrl's before connecting).
    plan = {"steps": [step("a", COMMON, "http.get('http://203.0.113.7/patients');")]}
    result, _ = run(plan, runtime_root)
    assert result.network_violations, result
    assert "203.0.113.7" in result.network_violations[0]
    assert "a" in result.errors
    assert any(p.startswith("network:") for p in result.problems())
