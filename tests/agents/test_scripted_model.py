"""``ScriptedModel``: the model tests script."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from agents.models import (
    ChatModel,
    ModelRequest,
    ModelResponse,
    ModelUnavailableError,
    RequestContext,
    ScriptedModel,
    ScriptExhaustedError,
    Usage,
)


def request(role: Any = "planner", text: str = "hello", **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        role=role,
        system=kwargs.pop("system", "system prompt"),
        messages=kwargs.pop("messages", [{"role": "user", "content": text}]),
        context=RequestContext(user_text=text),
        **kwargs,
    )


class Sink:
    def __init__(self) -> None:
        self.chunks: list[str] = []

    async def __call__(self, text: str) -> None:
        self.chunks.append(text)


async def test_is_a_chat_model() -> None:
    model = ScriptedModel()
    assert isinstance(model, ChatModel)
    assert model.name == "scripted"


async def test_steps_are_played_in_order() -> None:
    model = ScriptedModel([ScriptedModel.text("one"), ScriptedModel.text("two")])
    assert (await model.create(request())).text == "one"
    assert (await model.create(request())).text == "two"
    model.assert_all_consumed()


async def test_text_helper() -> None:
    response = ScriptedModel.text("hi", usage=Usage(input_tokens=3))
    assert response.content == [{"type": "text", "text": "hi"}]
    assert response.stop_reason == "end_turn"
    assert response.usage.input_tokens == 3


async def test_tool_calls_get_minted_ids_per_model() -> None:
    script = [
        ScriptedModel.tool_calls(("add_jobs", {"jobs": []}), ("remove_jobs", {"keys": ["a"]})),
        ScriptedModel.tool_calls(("add_jobs", {"jobs": []}), text="Again."),
    ]
    model = ScriptedModel(script)
    first = await model.create(request())
    second = await model.create(request())

    assert first.stop_reason == "tool_use"
    assert [u["id"] for u in first.tool_uses] == ["toolu_s_0001", "toolu_s_0002"]
    assert first.tool_uses[1] == {
        "type": "tool_use",
        "id": "toolu_s_0002",
        "name": "remove_jobs",
        "input": {"keys": ["a"]},
    }
    assert [u["id"] for u in second.tool_uses] == ["toolu_s_0003"]
    assert second.text == "Again."
    # the script itself is not modified: another model mints its own ids
    again = await ScriptedModel([script[0]]).create(request())
    assert again.tool_uses[0]["id"] == "toolu_s_0001"


async def test_explicit_tool_ids_are_kept() -> None:
    response = ModelResponse(
        content=[{"type": "tool_use", "id": "toolu_mine", "name": "x", "input": {}}],
        stop_reason="tool_use",
    )
    served = await ScriptedModel([response]).create(request())
    assert served.tool_uses[0]["id"] == "toolu_mine"


async def test_tool_calls_needs_a_call() -> None:
    with pytest.raises(ValueError):
        ScriptedModel.tool_calls()


async def test_per_role_queues() -> None:
    model = ScriptedModel(
        {
            "router": [ScriptedModel.text("route: planner")],
            "planner": [ScriptedModel.text("plan 1"), ScriptedModel.text("plan 2")],
        }
    )
    assert (await model.create(request("planner"))).text == "plan 1"
    assert (await model.create(request("router"))).text == "route: planner"
    assert (await model.create(request("planner"))).text == "plan 2"
    with pytest.raises(ScriptExhaustedError, match="job_code"):
        await model.create(request("job_code"))
    assert [r.role for r in model.requests] == ["planner", "router", "planner", "job_code"]
    assert [r.role for r in model.requests_for("planner")] == ["planner", "planner"]


async def test_keyed_role_queue_wins_over_shared_queue() -> None:
    model = ScriptedModel([ScriptedModel.text("shared")])
    model.push(ScriptedModel.text("code"), role="job_code")
    assert (await model.create(request("job_code"))).text == "code"
    assert (await model.create(request("planner"))).text == "shared"
    with pytest.raises(ScriptExhaustedError):
        await model.create(request("job_code"))  # its keyed queue is empty


async def test_callable_steps_see_the_request() -> None:
    def echo(req: ModelRequest) -> ModelResponse:
        return ScriptedModel.text(f"you said {req.context.user_text}")

    async def async_echo(req: ModelRequest) -> ModelResponse:
        await asyncio.sleep(0)
        return ScriptedModel.text(f"{req.role} heard {req.messages[-1]['content']}")

    model = ScriptedModel([echo, async_echo])
    assert (await model.create(request(text="hi"))).text == "you said hi"
    assert (await model.create(request(text="yo"))).text == "planner heard yo"


async def test_callable_must_return_a_response() -> None:
    def wrong(req: ModelRequest) -> Any:
        return "not a response"

    model = ScriptedModel([wrong])
    with pytest.raises(TypeError, match="not a ModelResponse"):
        await model.create(request())


async def test_exception_steps_are_raised() -> None:
    boom = ModelUnavailableError("overloaded", status=529)
    model = ScriptedModel([boom, ScriptedModel.text("recovered")])
    with pytest.raises(ModelUnavailableError) as caught:
        await model.create(request())
    assert caught.value is boom
    assert (await model.create(request())).text == "recovered"
    assert len(model.requests) == 2  # failed calls are recorded too


async def test_bad_steps_are_rejected_up_front() -> None:
    with pytest.raises(TypeError):
        ScriptedModel(["just a string"])  # type: ignore[list-item]


async def test_exhaustion_is_loud() -> None:
    model = ScriptedModel([ScriptedModel.text("only")])
    await model.create(request())
    with pytest.raises(ScriptExhaustedError, match=r"call #2.*'second'") as caught:
        await model.create(request(text="second"))
    assert isinstance(caught.value, AssertionError)


async def test_default_is_used_when_exhausted() -> None:
    model = ScriptedModel(
        [ScriptedModel.text("scripted")],
        default=ScriptedModel.tool_calls(("add_jobs", {"jobs": []})),
    )
    assert (await model.create(request())).text == "scripted"
    a = await model.create(request())
    b = await model.create(request())
    assert a.tool_uses[0]["id"] != b.tool_uses[0]["id"]  # each use is a fresh copy
    a.content.clear()
    assert b.tool_uses and (await model.create(request())).tool_uses


async def test_requests_are_recorded_as_snapshots() -> None:
    tools = [{"name": "add_jobs", "input_schema": {"type": "object"}}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "first"}]
    model = ScriptedModel([ScriptedModel.text("a"), ScriptedModel.text("b")])

    await model.create(request(messages=messages, tools=tools, system="SYS"))
    messages.append({"role": "assistant", "content": "a"})
    await model.create(request(messages=messages, tools=tools))

    first, second = model.requests
    assert first.system == "SYS"
    assert first.tools == tools
    assert first.messages == [{"role": "user", "content": "first"}]  # not the mutated list
    assert len(second.messages) == 2


async def test_on_text_gets_text_in_chunks() -> None:
    text = "I added a dedupe step before the upsert."
    sink = Sink()
    model = ScriptedModel(
        [ScriptedModel.tool_calls(("add_jobs", {"jobs": []}), text=text)], text_chunks=3
    )
    response = await model.create(request(), on_text=sink)
    assert 1 < len(sink.chunks) <= 3
    assert "".join(sink.chunks) == text == response.text


async def test_on_text_not_called_without_text() -> None:
    sink = Sink()
    model = ScriptedModel([ScriptedModel.tool_calls(("add_jobs", {"jobs": []}))])
    await model.create(request(), on_text=sink)
    assert sink.chunks == []


async def test_latency_is_slept() -> None:
    model = ScriptedModel(
        [ScriptedModel.text("slow"), ScriptedModel.text("fast")],
        latency={"planner": 0.05, "router": 0.0},
    )
    start = time.perf_counter()
    await model.create(request("planner"))
    assert time.perf_counter() - start >= 0.05
    start = time.perf_counter()
    await model.create(request("router"))
    assert time.perf_counter() - start < 0.05


async def test_flat_latency_lets_calls_overlap() -> None:
    model = ScriptedModel(default=ScriptedModel.text("x"), latency=0.05)
    start = time.perf_counter()
    await asyncio.gather(*(model.create(request()) for _ in range(5)))
    elapsed = time.perf_counter() - start
    assert 0.05 <= elapsed < 0.2
