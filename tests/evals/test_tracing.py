"""Langfuse tracing of turns: spans captured in memory (structure, names, attributes, masking)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agents.events import RouteEvent
from agents.runtime import TurnRuntime
from agents.tracing import LangfuseConfig, Tracer, _NoopTrace, mask_secrets
from evals.runner import EvalOptions, EvalRun, Progress, run_eval
from evals.scenario import load_scenarios
from prompts import load_prompt
from tests.agents.helpers import TURN_TIME
from tests.evals.helpers import scenario

SCRIPTED = {s.id: s for s in load_scenarios(model="scripted")}
LEAK = "sk-ant-api03-LEAKED0123456789abcdef"


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


async def _traced(client: Any, scenarios: list[Any], **turn_kwargs: Any) -> EvalRun:
    tracer = Tracer(client, tags=["test"])
    run = await run_eval(
        EvalOptions(model="scripted", judge=False),
        scenarios=scenarios,
        observe=lambda turn, rt: tracer.turn(turn, rt, **turn_kwargs),
        progress=Progress(len(scenarios), stream=io.StringIO()),
    )
    client.flush()
    return run


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


async def test_one_trace_per_turn_with_generations_and_tool_spans(
    langfuse_client: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    client = langfuse_client(span_exporter=exporter)
    run = await _traced(
        client, [SCRIPTED["add-specific-dedupe-after"]], session_id="sess-1", user_id="alice"
    )
    assert run.pass_rate == 1.0
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.name == "turn"]
    assert len(roots) == 1
    root = roots[0]
    turn_id = json.loads(attrs(root)["langfuse.observation.metadata.turn_id"])
    assert turn_id.startswith("add-specific-dedupe-after-")
    assert client.create_trace_id(seed=turn_id) == format(root.context.trace_id, "032x")
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}
    a = attrs(root)
    assert a["langfuse.observation.type"] == "agent"
    assert a["session.id"] == "sess-1" and a["user.id"] == "alice"
    assert set(a["langfuse.trace.tags"]) == {"test", "editing"}
    assert a["langfuse.trace.metadata.route"] == '"planner"'
    assert a["langfuse.trace.metadata.read_only"] == "false"
    assert "add a step called Dedupe" in a["langfuse.observation.input"]

    generations = [s for s in spans if s.name == "planner model call"]
    assert len(generations) == 2
    g = attrs(generations[0])
    assert g["langfuse.observation.type"] == "generation"
    assert g["langfuse.observation.model.name"] == "scripted"
    usage = json.loads(g["langfuse.observation.usage_details"])
    assert usage["input"] == 2400 and usage["output"] == 120
    assert "cache_read_input_tokens" in usage and "cache_creation_input_tokens" in usage
    assert g["langfuse.observation.metadata.prompt_name"] == '"planner"'
    assert g["langfuse.observation.metadata.prompt_version"] == (
        f'"{load_prompt("planner").version}"'
    )
    assert len(json.loads(g["langfuse.observation.metadata.prompt_hash"])) == 16
    assert g["session.id"] == "sess-1"  # trace attributes on every observation

    tools = [s for s in spans if attrs(s).get("langfuse.observation.type") == "tool"]
    assert [s.name for s in tools] == ["add_jobs", "update_edges", "add_edges"]
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in tools)
    add = attrs(tools[0])
    assert "Dedupe referrals" in add["langfuse.observation.input"]
    assert add["langfuse.observation.output"].startswith("Added 1 step")
    assert json.loads(add["langfuse.observation.metadata.version"]) == 2


async def test_code_sub_agents_get_their_own_spans(
    langfuse_client: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    client = langfuse_client(span_exporter=exporter)
    await _traced(client, [SCRIPTED["code-parallel-sub-agents"], SCRIPTED["code-direct-route"]])
    spans = exporter.get_finished_spans()
    agents = [s for s in spans if s.name.startswith("code agent: ")]
    assert sorted(s.name for s in agents) == [
        "code agent: Send SMS",
        "code agent: Send email",
        "code agent: Send email",
    ]
    assert all(attrs(s)["langfuse.observation.type"] == "agent" for s in agents)
    assert all(attrs(s)["langfuse.observation.output"].startswith("Wrote code for") for s in agents)
    code_generations = [s for s in spans if s.name == "job_code model call"]
    assert len(code_generations) == 3  # two in parallel, one on the direct route
    agent_ids = {s.context.span_id for s in agents}
    assert all(g.parent is not None and g.parent.span_id in agent_ids for g in code_generations)
    routers = [s for s in spans if s.name == "router model call"]
    assert len(routers) == 1
    direct_root = next(
        s
        for s in spans
        if s.name == "turn" and attrs(s)["langfuse.trace.metadata.route"] == '"job_code"'
    )
    assert direct_root is not None


async def test_secrets_are_masked_in_every_span(
    langfuse_client: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    client = langfuse_client(span_exporter=exporter)
    leaky = scenario(
        {"mutation": "none", "rubric": None},
        fixture="referral_intake",
        turns=[
            {"content": f"my key is {LEAK} and Authorization: Bearer abcdefghijklmnop, what now?"}
        ],
        script={"planner": [{"text": f"Never share {LEAK}; api_key=hunter2hunter2"}]},
    )
    await _traced(client, [leaky])
    dump = json.dumps([attrs(s) for s in exporter.get_finished_spans()])
    assert "LEAKED" not in dump and "abcdefghijklmnop" not in dump and "hunter2" not in dump
    assert "sk-ant-***" in dump


def test_mask_secrets_shapes() -> None:
    data = {
        "headers": {"Authorization": "Bearer tok", "x-api-key": "k"},
        "api_key": "sk-ant-abc",
        "text": ["call with token=abc123", "plain"],
        "n": 3,
    }
    masked = mask_secrets(data=data)
    assert masked["headers"] == {"Authorization": "***", "x-api-key": "***"}
    assert masked["api_key"] == "***" and masked["text"] == ["call with token=***", "plain"]
    assert masked["n"] == 3


def test_disabled_tracer_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    import langfuse

    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("a Langfuse client was built without configuration")

    monkeypatch.setattr(langfuse, "Langfuse", refuse)
    config = LangfuseConfig.from_env({})
    assert not config.configured and config.client() is None
    tracer = Tracer(config.client())
    assert not tracer.enabled
    runtime = TurnRuntime(models={}, clock=lambda: TURN_TIME)
    trace = tracer.turn({"turn_id": "t1"}, runtime)
    assert isinstance(trace, _NoopTrace) and trace.runtime(runtime) is runtime
    trace.event(RouteEvent(destination="planner"))
    trace.close()
    tracer.flush()
    only_public = LangfuseConfig.from_env({"LANGFUSE_PUBLIC_KEY": "pk"})
    assert not only_public.configured


def test_config_reads_the_environment() -> None:
    config = LangfuseConfig.from_env(
        {
            "LANGFUSE_PUBLIC_KEY": "pk-lf-1",
            "LANGFUSE_SECRET_KEY": "sk-lf-2",
            "LANGFUSE_HOST": "http://127.0.0.1:3000",
        }
    )
    assert config.configured and config.host == "http://127.0.0.1:3000"
    assert "sk-lf-2" not in repr(config)


async def test_secrets_in_job_code_are_masked_in_every_span(
    langfuse_client: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    client = langfuse_client(span_exporter=exporter)
    secrets = ["Zq8sEcReT0va1ueA", "Pw0rdQ9xY7zW", "k3yV4lu3Ab12", "Us3rPa55Cd9z", "b4s1cAuthXy7"]
    code = (
        f"get('/x', {{ headers: {{ Authorization: 'Bearer {secrets[0]}', "
        f"'x-api-key': '{secrets[2]}' }} }});\nconst pw = \"{secrets[1]}\";\n"
        f"get('https://ana:{secrets[3]}@example.org/api');\n"
        f"post('/y', {{ headers: {{ Authorization: 'Basic ' + btoa('ana:{secrets[4]}') }} }});"
    )
    leaky = scenario(
        {"mutation": "none", "rubric": None},
        fixture="referral_intake",
        turns=[{"content": f"use this code for the fetch step:\n{code}"}],
        script={"planner": [{"text": f"That code would be:\n{code}"}]},
    )
    await _traced(client, [leaky])
    dump = json.dumps([attrs(s) for s in exporter.get_finished_spans()])
    assert "That code would be" in dump  # the text itself was exported
    assert [s for s in secrets if s in dump] == []
