"""Code sub-agents: parallel fan-out, exact-key stitching, checks with one retry."""

from __future__ import annotations

import asyncio

from agents.models import ModelError, ModelRequest, ModelResponse, ScriptedModel
from tests.agents.helpers import BASE_YAML, by_role, run

S = ScriptedModel


def _code_for(request: ModelRequest) -> ModelResponse:
    """Each sub-agent writes code naming its own step, so mix-ups are visible."""
    key = request.context.job_key
    return S.tool_calls(
        ("edit_job_code", {"edits": [{"action": "rewrite", "new_code": f"get('/{key}');\n"}]})
    )


async def test_parallel_fan_out_stitches_each_result_into_its_own_step() -> None:
    planner = ScriptedModel(
        [
            S.tool_calls(
                ("add_jobs", {"jobs": [{"name": "Notify", "adaptor": "http"}]}),
                ("add_edges", {"edges": [{"source": "check", "target": "notify"}]}),
                ("call_job_code_agent", {"job_key": "check", "message": "look up coverage"}),
                ("call_job_code_agent", {"job_key": "notify", "message": "post a notice"}),
            ),
            S.text("Added Notify and wrote code for both steps."),
        ]
    )
    # Both sub-agents must be in flight at once to pass the barrier: run one after
    # the other and the first waits alone until the timeout.
    barrier = asyncio.Barrier(2)

    async def together(request: ModelRequest) -> ModelResponse:
        await asyncio.wait_for(barrier.wait(), timeout=5)
        return _code_for(request)

    coder = ScriptedModel([together, together])
    model = by_role(planner=planner, job_code=coder)
    outcome = await run(model, "add a notify step and write the code")
    jobs = outcome.doc.structure.jobs
    assert jobs["check"].body == "get('/check');"
    assert jobs["notify"].body == "get('/notify');"
    assert jobs["fetch"].body == "get('/referrals');\n"  # untouched
    # Structural tools ran before the code agents: both saw the new step.
    assert {r.context.job_key for r in coder.requests} == {"check", "notify"}
    results = planner.requests[1].messages[-1]["content"]
    assert [r["tool_use_id"] for r in results] == [
        u["id"] for u in planner.requests[1].messages[-2]["content"] if u["type"] == "tool_use"
    ]
    assert all(not r.get("is_error") for r in results)
    assert [f["version"] for f in outcome.of("workflow")] == [2, 3, 4, 5]


async def test_invalid_code_is_sent_back_once_and_the_fix_is_stitched() -> None:
    planner = ScriptedModel(
        [
            S.tool_calls(("call_job_code_agent", {"job_key": "check", "message": "write it"})),
            S.text("Wrote the coverage check."),
        ]
    )
    coder = ScriptedModel(
        [
            S.tool_calls(("edit_job_code", {"edits": [{"action": "rewrite", "new_code": "get("}]})),
            S.tool_calls(
                ("edit_job_code", {"edits": [{"action": "rewrite", "new_code": "get('/c');"}]})
            ),
        ]
    )
    outcome = await run(by_role(planner=planner, job_code=coder), "write the code")
    feedback = coder.requests[1].messages[-1]["content"][0]
    assert feedback["is_error"] and "never closed" in feedback["content"]
    assert outcome.doc.structure.jobs["check"].body == "get('/c');"


async def test_code_that_stays_invalid_is_never_stitched() -> None:
    bad = S.tool_calls(
        ("edit_job_code", {"edits": [{"action": "rewrite", "new_code": "import x"}]})
    )
    planner = ScriptedModel(
        [
            S.tool_calls(("call_job_code_agent", {"job_key": "check", "message": "write it"})),
            S.text("The code agent could not write valid code."),
        ]
    )
    coder = ScriptedModel([bad, bad])
    outcome = await run(by_role(planner=planner, job_code=coder), "write the code")
    assert outcome.state["yaml"] == BASE_YAML
    report = planner.requests[1].messages[-1]["content"][0]
    assert report["is_error"] and "code_not_written" in report["content"]
    assert outcome.of("workflow") == []


def _rewrite(code: str) -> ModelResponse:
    return S.tool_calls(("edit_job_code", {"edits": [{"action": "rewrite", "new_code": code}]}))


async def test_a_function_the_adaptor_lacks_is_refused_as_data_and_the_fix_is_stitched() -> None:
    planner = ScriptedModel(
        [
            S.tool_calls(("call_job_code_agent", {"job_key": "fetch", "message": "post it"})),
            S.text("Wrote the fetch step."),
        ]
    )
    # language-http has post, not http.post (that namespace is language-common's).
    coder = ScriptedModel(
        [_rewrite("http.post('/referrals', $.data);\n"), _rewrite("post('/r', $.data);")]
    )
    outcome = await run(by_role(planner=planner, job_code=coder), "write the code")
    feedback = coder.requests[1].messages[-1]["content"][0]
    assert feedback["is_error"]
    assert feedback["content"].startswith("Error (unknown_operation):")
    assert "`http.post` is not a function of @openfn/language-http@7.3.2" in feedback["content"]
    assert "did you mean `post`" in feedback["content"]
    assert outcome.doc.structure.jobs["fetch"].body == "post('/r', $.data);\n"


async def test_code_that_keeps_calling_a_missing_function_is_never_stitched() -> None:
    planner = ScriptedModel(
        [
            S.tool_calls(("call_job_code_agent", {"job_key": "check", "message": "write it"})),
            S.text("The code agent could not write it."),
        ]
    )
    coder = ScriptedModel(
        [_rewrite("sendMail({ to: 'x' });"), _rewrite("fn(s => s);\nsendMail();")]
    )
    outcome = await run(by_role(planner=planner, job_code=coder), "write the code")
    assert outcome.state["yaml"] == BASE_YAML
    report = planner.requests[1].messages[-1]["content"][0]
    assert report["is_error"] and "code_not_written" in report["content"]
    assert "unknown_operation" in report["content"] and "sendMail" in report["content"]


async def test_operations_of_the_steps_own_adaptor_pass() -> None:
    planner = ScriptedModel(
        [
            S.tool_calls(("call_job_code_agent", {"job_key": "check", "message": "write it"})),
            S.text("Done."),
        ]
    )
    # language-fhir exports getClaim and re-exports language-common's each and fn.
    code = "each('$.items[*]', getClaim($.id));\nfn(state => state);\n"
    coder = ScriptedModel([_rewrite(code)])
    outcome = await run(by_role(planner=planner, job_code=coder), "write the code")
    # The step's body had no trailing newline, and keeps that convention.
    assert outcome.doc.structure.jobs["check"].body == code.rstrip("\n")
    assert len(coder.requests) == 1


async def test_code_request_for_an_unknown_step_is_an_error_not_a_sub_agent() -> None:
    planner = ScriptedModel(
        [
            S.tool_calls(("call_job_code_agent", {"job_key": "notify", "message": "x"})),
            S.text("There is no notify step."),
        ]
    )
    coder = ScriptedModel([])
    await run(by_role(planner=planner, job_code=coder), "write notify code")
    assert coder.requests == []
    assert "unknown_job" in planner.requests[1].messages[-1]["content"][0]["content"]


async def test_direct_route_runs_the_code_agent_on_the_viewed_step() -> None:
    router = ScriptedModel(
        [S.tool_calls(("route", {"destination": "job_code", "job_key": "check", "confidence": 5}))]
    )
    coder = ScriptedModel(
        [
            S.tool_calls(
                ("edit_job_code", {"edits": [{"action": "rewrite", "new_code": "get('/c');"}]}),
                text="Done: it now fetches coverage.",
            )
        ]
    )
    planner = ScriptedModel([])
    outcome = await run(
        by_role(router=router, planner=planner, job_code=coder),
        "make it fetch the coverage",
        page="job",
        job_key="check",
    )
    assert outcome.of("route") == [{"type": "route", "destination": "job_code"}]
    assert outcome.doc.structure.jobs["check"].body == "get('/c');"
    assert planner.requests == []
    assert outcome.of("message")[0]["text"] == "Done: it now fetches coverage."


async def test_router_failure_or_low_confidence_goes_to_the_planner() -> None:
    for answer in (
        ModelError("router down"),
        S.tool_calls(("route", {"destination": "job_code", "job_key": "check", "confidence": 2})),
        S.tool_calls(("route", {"destination": "teleport", "confidence": 5})),
    ):
        router = ScriptedModel([answer])
        planner = ScriptedModel([S.text("Sure.")])
        outcome = await run(
            by_role(router=router, planner=planner, job_code=ScriptedModel([])),
            "fix the code",
            page="job",
            job_key="check",
        )
        assert outcome.of("route") == [{"type": "route", "destination": "planner"}]
        assert len(planner.requests) == 1


async def test_no_router_call_off_a_step_page() -> None:
    router = ScriptedModel([])
    planner = ScriptedModel([S.text("Hello.")])
    await run(by_role(router=router, planner=planner, job_code=router), "hi")
    assert router.requests == []
