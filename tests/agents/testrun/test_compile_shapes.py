"""Job code in the forms OpenFn's documentation shows, run through the runner: each
expected result is what ``openfn`` reports for that body after ``@openfn/compiler``
(``compile.mjs`` applies its transforms: lazy state, promises, top-level operations,
imports), and what the real compiler refuses is refused here with its reason."""

from __future__ import annotations

from typing import Any

from agents.testrun import LocalRunner
from tests.agents.testrun.workflow import Job, workflow
from tools.testrun import RunRequest, SampleResponse, TestRun

LAB = "https://lab.example.org"
RESULT = SampleResponse(url=f"{LAB}/result", body={"value": 5})
MISSING = SampleResponse(url=f"{LAB}/missing", status=404, body={"error": "not found"})
ITEMS = SampleResponse(method="POST", url=f"{LAB}/items", body={"stored": True})


async def one_step(
    runner: LocalRunner, body: str, data: dict[str, Any] | None = None, adaptor: str = "http"
) -> TestRun:
    doc = workflow([Job("step", body, adaptor=adaptor)])
    request = RunRequest(input=data or {}, responses=[RESULT, MISSING, ITEMS])
    return await runner.run(doc, request, run_id="shape")


async def test_top_level_declarations_run_before_the_operations(runner: LocalRunner) -> None:
    body = (
        "const greeting = 'Hello';\n"
        "let calls = 0;\n"
        "function shout(text) { return text.toUpperCase(); }\n"
        "fn(state => { calls += 1; state.data.message = shout(`${greeting} ${state.data.name}`);"
        " state.data.calls = calls; return state; });\n"
    )
    run = await one_step(runner, body, {"name": "Ada"}, adaptor="common")

    assert run.status == "succeeded", run.summary
    assert run.final_state["data"] == {"name": "Ada", "message": "HELLO ADA", "calls": 1}


async def test_then_on_an_operation_gets_its_state(runner: LocalRunner) -> None:
    body = f"get('{LAB}/result').then(state => {{ state.data.seen = true; return state; }});"
    run = await one_step(runner, body)

    assert run.status == "succeeded", run.summary
    assert run.final_state["data"] == {"value": 5, "seen": True}


async def test_catch_on_an_operation_recovers_from_its_error(runner: LocalRunner) -> None:
    body = (
        f"get('{LAB}/missing').catch((error, state) => {{"
        " state.data = { recovered: error.message.includes('404') }; return state; });"
    )
    run = await one_step(runner, body)

    assert run.status == "succeeded", run.summary
    assert run.final_state["data"] == {"recovered": True}


async def test_catch_then_then_runs_the_then_after_recovering(runner: LocalRunner) -> None:
    body = (
        f"get('{LAB}/missing')\n"
        "  .catch((error, state) => ({ ...state, data: { recovered: true } }))\n"
        "  .then(state => ({ ...state, data: { ...state.data, after: true } }));"
    )
    run = await one_step(runner, body)

    assert run.status == "succeeded", run.summary
    assert run.final_state["data"] == {"recovered": True, "after": True}


async def test_then_without_catch_still_fails_the_step(runner: LocalRunner) -> None:
    run = await one_step(runner, f"get('{LAB}/missing').then(state => state);")

    assert run.status == "failed"
    assert "404" in (run.steps[0].error or "")


async def test_lazy_state_inside_a_callback_and_a_nested_operation(runner: LocalRunner) -> None:
    body = (
        "fn(state => get($.data.url)(state));\n"
        f"each($.data.value ? [{{ n: 1 }}, {{ n: 2 }}] : [], post('{LAB}/items', $.data));\n"
    )
    run = await one_step(runner, body, {"url": f"{LAB}/result"})

    assert run.status == "succeeded", run.summary
    assert [(r.method, r.url, r.matched) for r in run.requests] == [
        ("GET", f"{LAB}/result", True),
        ("POST", f"{LAB}/items", True),
        ("POST", f"{LAB}/items", True),
    ]


async def test_a_bare_dollar_is_left_as_the_compiler_leaves_it(runner: LocalRunner) -> None:
    run = await one_step(runner, "fn(state => ({ ...state, copy: $ }));", adaptor="common")

    assert run.status == "failed"
    assert "$ is not defined" in (run.steps[0].error or "")


async def test_what_the_real_compiler_refuses_is_unsupported_with_its_reason(
    runner: LocalRunner,
) -> None:
    doc = workflow(
        [
            Job("param", "fn(s => s.data.x + $.data.y);"),
            Job("statement", "fn(state => { const y = $.data.y; return state; });"),
            Job("outside", "const y = $.data.y;\nfn(state => state);"),
            Job("imports", "import { x } from 'y';\nfn(state => state);"),
        ]
    )
    run = await runner.run(doc, RunRequest(), run_id="refused")

    assert run.status == "unsupported" and run.steps == []
    reasons = {u.key: u.reason for u in run.unsupported}
    assert 'parameter "s" should be called "state"' in reasons["param"]
    assert "Must be inside an operation" in reasons["statement"]
    assert "line 1, column 11: Lazy State Error: Must be inside an operation" in reasons["outside"]
    assert "ImportDeclaration is outside the supported subset" in reasons["imports"]
