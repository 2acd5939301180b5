"""What the Langfuse SDK sends (traces, scores, prompts, datasets), recorded by a local stub."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import Any

import pytest

from agents.tracing import Tracer
from evals.langfuse_sync import DATASET, item_id, record_run, sync_dataset
from evals.runner import EvalOptions, Progress, run_eval
from evals.scenario import load_scenarios
from prompts import list_prompts, load_prompt
from prompts.langfuse import LangfusePromptSource, push_prompts, template_from_text, text_hash
from tests.evals.helpers import SECRET_KEY, scenario
from tests.evals.langfuse_stub import LangfuseStub

SCRIPTED = {s.id: s for s in load_scenarios(model="scripted")}
LEAK = "sk-ant-api03-SHOULDNOTLEAK42"


async def _run(client: Any, scenarios: list[Any], loader: Any = None, links: Any = None) -> Any:
    tracer = Tracer(client, tags=["stub"], prompt_links=links)
    return await run_eval(
        EvalOptions(model="scripted", judge=False),
        scenarios=scenarios,
        observe=tracer.turn,
        progress=Progress(len(scenarios), stream=io.StringIO()),
        prompt_loader=loader,
    )


async def test_traces_reach_the_otlp_endpoint_masked_and_authenticated(
    langfuse_stub: LangfuseStub, langfuse_client: Callable[..., Any]
) -> None:
    client = langfuse_client()
    leaky = scenario(
        {"mutation": "none", "rubric": None},
        fixture="referral_intake",
        turns=[{"content": f"use {LEAK} please"}],
        script={"planner": [{"text": "I will not use keys."}]},
    )
    await _run(client, [SCRIPTED["rename-quoted"], leaky])
    client.flush()
    names = {s["name"] for s in langfuse_stub.spans}
    assert {"turn", "planner model call", "update_jobs"} <= names
    roots = langfuse_stub.spans_named("turn")
    assert len(roots) == 2 and len({r["trace_id"] for r in roots}) == 2
    assert all(r["attributes"]["langfuse.observation.type"] == "agent" for r in roots)
    sent = b"".join(r.body for r in langfuse_stub.requests if r.path.endswith("/otel/v1/traces"))
    assert b"SHOULDNOTLEAK" not in sent and b"sk-ant-***" in sent
    auth = next(r for r in langfuse_stub.requests if r.path.endswith("/otel/v1/traces")).headers
    user, _, password = base64.b64decode(auth["authorization"].split()[1]).decode().partition(":")
    assert user.startswith("pk-lf-test-") and password == SECRET_KEY


async def test_scores_are_sent_to_the_scores_endpoint(
    langfuse_stub: LangfuseStub, langfuse_client: Callable[..., Any]
) -> None:
    client = langfuse_client()
    trace_id = client.create_trace_id(seed="turn-1")
    client.create_score(name="passed", value=1.0, trace_id=trace_id, comment="ok")
    client.flush()
    assert [(s["name"], s["value"], s["traceId"]) for s in langfuse_stub.scores] == [
        ("passed", 1.0, trace_id)
    ]


def test_prompts_push_creates_labelled_versions_once(
    langfuse_stub: LangfuseStub, langfuse_client: Callable[..., Any]
) -> None:
    client = langfuse_client()
    roles = list_prompts()
    first = push_prompts(client)
    assert {(r.role, r.version, r.status) for r in first} == {
        (role, v, "created") for role, versions in roles.items() for v in versions
    }
    stored = langfuse_stub.prompts["planner"][0]
    local = load_prompt("planner", "v1")
    assert stored["prompt"] == local.text and "v1" in stored["labels"]
    assert stored["config"] == {"planwright_version": "v1", "hash": local.hash}
    second = push_prompts(client)
    assert {r.status for r in second} == {"unchanged"}
    assert len(langfuse_stub.prompts["planner"]) == len(roles["planner"])  # one per version
    assert push_prompts(client, roles=["router"], dry_run=True)[0].status == "unchanged"


def test_prompts_load_by_label_with_the_same_hash_and_fall_back_locally(
    langfuse_stub: LangfuseStub,
    langfuse_client: Callable[..., Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = langfuse_client()
    push_prompts(client)
    source = LangfusePromptSource(client, cache_ttl_seconds=0)
    for role in list_prompts():
        fetched, local = source.load(role, "v1"), load_prompt(role, "v1")
        assert (fetched.hash, fetched.version, fetched.text) == (local.hash, "v1", local.text)
        assert fetched.variables == local.variables and fetched.path is None
        assert source.link(fetched.hash) is not None
    latest = source.load("planner")
    assert latest.hash == load_prompt("planner").hash
    label_queries = [
        r.query.get("label") for r in langfuse_stub.requests if "/v2/prompts/" in r.path
    ]
    assert ["v1"] in label_queries and ["latest"] in label_queries
    langfuse_stub.fail_prompts = True
    down = LangfusePromptSource(client, cache_ttl_seconds=0)
    fallback = down.load("planner", "v1")
    assert fallback.hash == load_prompt("planner", "v1").hash and fallback.path is not None
    assert "using the local file" in caplog.text
    asked = len(langfuse_stub.requests)
    assert down.load("router", "v1").hash == load_prompt("router", "v1").hash
    assert len(langfuse_stub.requests) == asked  # not asked again while down


def test_template_from_text_matches_the_loader() -> None:
    local = load_prompt("planner_user")
    template = template_from_text("planner_user", "v1", local.text)
    assert template.hash == local.hash == text_hash(local.text)
    assert template.render(**dict.fromkeys(local.variables, "x")) == local.render(
        **dict.fromkeys(local.variables, "x")
    )


async def test_generations_link_langfuse_prompts(
    langfuse_stub: LangfuseStub, langfuse_client: Callable[..., Any]
) -> None:
    client = langfuse_client()
    push_prompts(client)
    source = LangfusePromptSource(client, cache_ttl_seconds=0)
    run = await _run(client, [SCRIPTED["rename-quoted"]], loader=source.load, links=source.link)
    assert run.pass_rate == 1.0
    client.flush()
    generation = langfuse_stub.spans_named("planner model call")[0]["attributes"]
    assert generation["langfuse.observation.prompt.name"] == "planner"
    # Versions are pushed oldest first, so the latest local file is Langfuse's newest.
    assert generation["langfuse.observation.prompt.version"] == len(list_prompts()["planner"])


async def test_eval_run_becomes_a_dataset_run_with_every_grader_score(
    langfuse_stub: LangfuseStub, langfuse_client: Callable[..., Any]
) -> None:
    client = langfuse_client()
    chosen = [SCRIPTED["rename-quoted"], SCRIPTED["remove-without-code"]]
    run = await _run(None, chosen)
    assert sync_dataset(client, chosen) == 2
    assert sync_dataset(client, chosen) == 2  # upsert: same ids, no duplicates
    assert set(langfuse_stub.items) == {item_id(DATASET, s.id) for s in chosen}
    assert langfuse_stub.datasets[DATASET]["name"] == DATASET
    result = record_run(client, run)
    client.flush()
    assert (
        result.run_name
        == run.run_name
        == "scripted "
        + ",".join(f"{role}={load_prompt(role).version}" for role in sorted(list_prompts()))
    )
    names = [s["name"] for s in langfuse_stub.scores]
    graders = {g.name for r in run.results for g in r.runs[0].grades if not g.skipped}
    assert graders | {"passed", "pass_rate"} <= set(names)
    assert names.count("passed") == 2 and names.count("pass_rate") == 1
    passed = [s for s in langfuse_stub.scores if s["name"] == "passed"]
    assert {s["value"] for s in passed} == {1.0}
    item_spans = [
        s
        for s in langfuse_stub.spans
        if s["attributes"].get("langfuse.experiment.name") == run.run_name
    ]
    assert {s["attributes"].get("langfuse.experiment.item.id") for s in item_spans} >= {
        item_id(DATASET, s.id) for s in chosen
    }


async def test_skipped_judge_scores_are_not_sent(
    langfuse_stub: LangfuseStub,
    langfuse_client: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    client = langfuse_client()
    run = await run_eval(
        EvalOptions(model="scripted", judge=True),
        scenarios=[SCRIPTED["question-what-does-it-do"]],
        progress=Progress(1, stream=io.StringIO()),
    )
    assert any(g.skipped for g in run.results[0].runs[0].grades)
    record_run(client, run)
    client.flush()
    assert not any(s["name"].startswith("judge:") for s in langfuse_stub.scores)
