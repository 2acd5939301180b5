"""``AnthropicModel`` through the real ``anthropic`` SDK against the fake Messages API."""

from __future__ import annotations

import copy
import traceback
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import pytest
from pydantic import SecretStr

from agents.models import (
    AnthropicModel,
    ChatModel,
    MalformedModelOutputError,
    ModelError,
    ModelRequest,
    ModelTimeoutError,
    ModelUnavailableError,
)
from tests.agents.helpers import CLAUDE_MODELS
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    delay_reply,
    error_reply,
    malformed_tool_reply,
    stream_error_reply,
    text_reply,
    tool_reply,
)

API_KEY = "sk-ant-test-DO-NOT-LEAK-5f3c9a"
MODELS = CLAUDE_MODELS
SYSTEM = "You are the Planwright planner. Edit the workflow only through tools."
TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "add_jobs",
        "description": "Add steps to the workflow.",
        "input_schema": {
            "type": "object",
            "properties": {"jobs": {"type": "array", "items": {"type": "object"}}},
            "required": ["jobs"],
        },
    },
    {
        "name": "remove_jobs",
        "description": "Remove steps.",
        "input_schema": {"type": "object", "properties": {"keys": {"type": "array"}}},
    },
)


def tools() -> list[dict[str, Any]]:
    """A fresh copy of the tool definitions (so a mutation cannot hide across tests)."""
    return copy.deepcopy(list(TOOLS))


MakeModel = Callable[..., AnthropicModel]


def request(role: Any = "planner", **kwargs: Any) -> ModelRequest:
    fields: dict[str, Any] = {
        "system": SYSTEM,
        "messages": [{"role": "user", "content": "Add a dedupe step before the upsert."}],
        "tools": tools(),
    }
    fields.update(kwargs)
    return ModelRequest(role=role, **fields)


@pytest.fixture
async def make_model(fake_anthropic: FakeAnthropicServer) -> AsyncIterator[MakeModel]:
    made: list[AnthropicModel] = []

    def factory(**kwargs: Any) -> AnthropicModel:
        options: dict[str, Any] = {
            "models": MODELS,
            "api_key": API_KEY,
            "base_url": fake_anthropic.base_url,
            "timeout": 5.0,
            "max_retries": 0,
        }
        options.update(kwargs)
        model = AnthropicModel(**options)
        made.append(model)
        return model

    yield factory
    for model in made:
        await model.aclose()


class Sink:
    def __init__(self) -> None:
        self.chunks: list[str] = []

    async def __call__(self, text: str) -> None:
        self.chunks.append(text)


async def test_is_a_chat_model(make_model: MakeModel) -> None:
    model = make_model()
    assert isinstance(model, ChatModel)
    assert model.name == "anthropic"


async def test_text_is_streamed_to_on_text_in_order(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    answer = "I added a dedupe step before the upsert and kept the rest unchanged."
    fake_anthropic.queue(text_reply(answer))
    sink = Sink()

    response = await make_model().create(request(), on_text=sink)

    assert response.text == answer
    assert response.content == [{"type": "text", "text": answer}]
    assert response.stop_reason == "end_turn"
    assert len(sink.chunks) > 1
    assert "".join(sink.chunks) == answer
    assert sink.chunks[0] == "I "
    assert fake_anthropic.requests[0].stream is True


async def test_tool_use_input_is_a_dict(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    jobs = {"jobs": [{"name": "Dedupe", "adaptor": "common", "after": "fetch"}]}
    fake_anthropic.queue(tool_reply(("add_jobs", jobs), text="Adding it."))
    sink = Sink()

    response = await make_model().create(request(), on_text=sink)

    assert response.stop_reason == "tool_use"
    assert response.text == "Adding it."
    [use] = response.tool_uses
    assert use == {"type": "tool_use", "id": "toolu_fake_0001", "name": "add_jobs", "input": jobs}
    assert isinstance(use["input"], dict)
    assert "".join(sink.chunks) == "Adding it."


async def test_request_marks_system_and_newest_message_for_caching(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(text_reply("ok"))
    caller_tools = tools()
    choice = {"type": "tool", "name": "add_jobs"}

    await make_model().create(request(tools=caller_tools, tool_choice=choice, max_tokens=321))

    sent = fake_anthropic.requests[0]
    assert sent.system == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    # the system prompt's breakpoint caches the tools before it too
    assert all("cache_control" not in tool for tool in sent.tools)
    assert [t["name"] for t in sent.tools] == ["add_jobs", "remove_jobs"]
    assert sent.tool_choice == choice
    assert sent.max_tokens == 321
    text = request().messages[0]["content"]
    assert sent.messages == [
        {
            "role": "user",
            "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert caller_tools == list(TOOLS)  # the caller's dicts were not touched
    assert all("cache_control" not in tool for tool in caller_tools)


async def test_no_tools_and_no_system_are_left_out(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(text_reply("ok"))
    await make_model().create(request(system="", tools=[]))
    body = fake_anthropic.requests[0].json
    assert "system" not in body
    assert "tools" not in body
    assert "tool_choice" not in body


async def test_usage_includes_cache_tokens_per_call(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(text_reply("first"), text_reply("second"))
    model = make_model()
    system = SYSTEM + " Keep every step's key." * 1200  # over the planner's 4,096 minimum

    first = await model.create(request(system=system))
    second = await model.create(request(system=system))

    # the rolling breakpoint on the newest message caches the whole request
    assert first.usage.input_tokens == second.usage.input_tokens == 0
    assert first.usage.output_tokens > 0
    assert first.usage.cache_creation_input_tokens > 0
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens


@pytest.mark.parametrize("role", ["router", "planner", "job_code"])
async def test_model_id_follows_role(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel, role: Any
) -> None:
    fake_anthropic.queue(text_reply("ok"))
    response = await make_model().create(request(role=role))
    assert fake_anthropic.requests[0].model == MODELS[role]
    assert response.model == MODELS[role]


async def test_role_without_a_model_id_is_a_model_error(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    model = make_model(models={"planner": "claude-opus-4-5"})
    with pytest.raises(ModelError, match="router"):
        await model.create(request(role="router"))
    assert fake_anthropic.requests == []


async def test_overloaded_is_retried_by_the_sdk(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(
        error_reply(529, "overloaded_error", "Overloaded", retry_after=0.01),
        text_reply("made it"),
    )
    response = await make_model(max_retries=2).create(request())
    assert response.text == "made it"
    assert len(fake_anthropic.requests) == 2
    assert [r.retry_count for r in fake_anthropic.requests] == [0, 1]


async def test_overloaded_after_retries_is_unavailable(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(*[error_reply(529, "overloaded_error", retry_after=0.01)] * 2)
    with pytest.raises(ModelUnavailableError) as caught:
        await make_model(max_retries=1).create(request())
    assert caught.value.details["status"] == 529
    assert len(fake_anthropic.requests) == 2


async def test_rate_limit_without_retries_is_unavailable(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(error_reply(429, "rate_limit_error", "Slow down", retry_after=0.01))
    with pytest.raises(ModelUnavailableError) as caught:
        await make_model(max_retries=0).create(request())
    err = caught.value
    assert err.code == "model_unavailable"
    assert "429" in err.message
    assert "req_fake_0001" in err.message
    assert err.details["status"] == 429
    assert err.details["request_id"] == "req_fake_0001"
    assert err.details["error_type"] == "rate_limit_error"
    assert len(fake_anthropic.requests) == 1


async def test_slow_answer_times_out(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(delay_reply(2.0, text_reply("too late")))
    with pytest.raises(ModelTimeoutError) as caught:
        await make_model(timeout=0.2, max_retries=0).create(request())
    assert caught.value.code == "model_timeout"
    assert len(fake_anthropic.requests) == 1


async def test_bad_request_is_a_plain_model_error(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(error_reply(400, "invalid_request_error", "messages: too short"))
    with pytest.raises(ModelError) as caught:
        await make_model(max_retries=2).create(request())
    err = caught.value
    assert not isinstance(err, ModelUnavailableError | ModelTimeoutError)
    assert "messages: too short" in err.message
    assert err.details["status"] == 400
    assert len(fake_anthropic.requests) == 1  # not retried


@pytest.mark.parametrize(
    "raw",
    [
        '{"keys": [}',  # syntactically broken: the stream helper raises ValueError
        "[1, 2, 3]",  # valid JSON, but not an object
    ],
)
async def test_malformed_tool_input(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel, raw: str
) -> None:
    fake_anthropic.queue(malformed_tool_reply("remove_jobs", raw))
    with pytest.raises(MalformedModelOutputError) as caught:
        await make_model().create(request())
    assert caught.value.code == "model_malformed_output"


async def test_stream_error_midway(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(
        stream_error_reply("overloaded_error", "Overloaded", partial_text="Let me")
    )
    sink = Sink()
    with pytest.raises(ModelUnavailableError) as caught:
        await make_model(max_retries=2).create(request(), on_text=sink)
    assert caught.value.details["error_type"] == "overloaded_error"
    assert caught.value.details["mid_stream"] is True
    assert "".join(sink.chunks) == "Let me"  # text already forwarded stays forwarded
    assert len(fake_anthropic.requests) == 1


async def test_non_transient_stream_error_is_a_model_error(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(stream_error_reply("invalid_request_error", "bad block"))
    with pytest.raises(ModelError) as caught:
        await make_model().create(request())
    assert not isinstance(caught.value, ModelUnavailableError)
    assert "bad block" in caught.value.message


async def test_on_text_errors_are_not_translated(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(text_reply("one two three"))

    async def broken(text: str) -> None:
        raise ValueError("sink is broken")

    with pytest.raises(ValueError, match="sink is broken"):
        await make_model().create(request(), on_text=broken)


async def test_client_is_lazy_and_env_is_honoured(
    fake_anthropic_env: FakeAnthropicServer,
) -> None:
    model = AnthropicModel(models=MODELS, max_retries=0)
    assert model._client is None  # nothing built at construction
    fake_anthropic_env.queue(text_reply("from env"))

    response = await model.create(request())
    await model.aclose()

    assert response.text == "from env"
    assert fake_anthropic_env.requests[0].api_key == "test-key"


async def test_injected_client_is_used_and_not_closed(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    client = anthropic.AsyncAnthropic(api_key="injected-key", base_url=fake_anthropic.base_url)
    model = AnthropicModel(models=MODELS, client=client)
    fake_anthropic.queue(text_reply("one"), text_reply("two"))

    assert (await model.create(request())).text == "one"
    await model.aclose()
    assert not client.is_closed()
    assert (await model.create(request())).text == "two"
    assert fake_anthropic.requests[0].api_key == "injected-key"
    await client.close()


async def test_missing_credentials_is_a_model_error(
    fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    model = AnthropicModel(models=MODELS, base_url=fake_anthropic.base_url)
    with pytest.raises(ModelError, match="credentials"):
        await model.create(request())
    await model.aclose()
    assert fake_anthropic.requests == []


async def test_api_key_never_leaks(
    fake_anthropic: FakeAnthropicServer, make_model: MakeModel
) -> None:
    fake_anthropic.queue(
        error_reply(401, "authentication_error", "invalid x-api-key"),
        error_reply(429, "rate_limit_error", retry_after=0.01),
        malformed_tool_reply("add_jobs", '{"keys": [}'),
        stream_error_reply(),
        stream_error_reply(),  # a mid-stream failure is retried once
        delay_reply(2.0, text_reply("late")),
    )
    for secret in (API_KEY, SecretStr(API_KEY)):
        model = make_model(api_key=secret, timeout=0.3)
        assert API_KEY not in repr(model)
        assert API_KEY not in str(model)

    errors: list[ModelError] = []
    for _ in range(5):
        with pytest.raises(ModelError) as caught:
            await model.create(request())
        errors.append(caught.value)

    assert fake_anthropic.requests[0].api_key == API_KEY  # the key was really sent
    assert [type(e) for e in errors] == [
        ModelError,
        ModelUnavailableError,
        MalformedModelOutputError,
        ModelUnavailableError,
        ModelTimeoutError,
    ]
    for err in errors:
        text = "".join(traceback.format_exception(err))
        for rendered in (str(err), repr(err), repr(err.details), repr(err.as_dict()), text):
            assert API_KEY not in rendered


def test_rolling_breakpoints_mark_the_two_newest_user_messages_only() -> None:
    from agents.models.cache_layout import rolling_breakpoints

    result = {"type": "tool_result", "tool_use_id": "t1", "content": "done"}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": "second"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
        },
        {"role": "user", "content": [result]},
    ]
    before = copy.deepcopy(messages)
    marked = rolling_breakpoints(messages)
    assert messages == before  # the caller's messages are not touched
    assert marked[0] == messages[0] and marked[1] == messages[1] and marked[3] == messages[3]
    assert marked[2]["content"] == [
        {"type": "text", "text": "second", "cache_control": {"type": "ephemeral"}}
    ]
    assert marked[4]["content"] == [{**result, "cache_control": {"type": "ephemeral"}}]


def test_breakpoints_mark_the_end_of_the_earlier_turns_and_stay_within_four() -> None:
    from agents.models.cache_layout import MAX_BREAKPOINTS, rolling_breakpoints

    earlier: list[dict[str, Any]] = [
        {"role": "user", "content": "old question"},
        {"role": "assistant", "content": "old answer"},
    ]
    turn: list[dict[str, Any]] = [
        {"role": "user", "content": "structure and message"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]},
    ]
    marked = rolling_breakpoints([*earlier, *turn], len(earlier), limit=MAX_BREAKPOINTS - 1)
    flags = ["cache_control" in m["content"][-1] for m in marked if isinstance(m["content"], list)]
    assert marked[0] == earlier[0]  # only the last message of the earlier turns is marked
    assert marked[1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert flags == [True, True, False, True]  # history end, then the two newest user messages
    first_round = rolling_breakpoints([*earlier, turn[0]], len(earlier), limit=3)
    # in a turn's first round the newest user message is the turn's own: one breakpoint
    assert "cache_control" in first_round[2]["content"][-1]
    assert "cache_control" not in str(first_round[0])
    tight = rolling_breakpoints([*earlier, *turn], len(earlier), limit=2)
    assert sum("cache_control" in str(m) for m in tight) == 2
