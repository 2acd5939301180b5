"""The fake Messages API, exercised through the real ``anthropic`` SDK."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import anthropic
import httpx
import pytest
from anthropic._constants import ANTHROPIC_API_VERSION
from anthropic.types import TextBlock, ToolUseBlock

from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    Reply,
    ToolUse,
    delay_reply,
    error_reply,
    estimate_input_tokens,
    malformed_tool_reply,
    overloaded_reply,
    raw_reply,
    stream_error_reply,
    text_reply,
    tool_reply,
)

# Registers the `fake_anthropic` / `fake_anthropic_env` fixtures for this module.

MODEL = "claude-sonnet-4-6"
USER: list[Any] = [{"role": "user", "content": "Add a dedupe step before the upsert."}]
TOOLS: list[Any] = [
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
]
SYSTEM_CACHED: list[Any] = [
    {
        "type": "text",
        "text": "You are the Planwright planner. " * 300,  # over the 2,048-token minimum
        "cache_control": {"type": "ephemeral"},
    }
]


def client(server: FakeAnthropicServer, **kwargs: Any) -> anthropic.Anthropic:
    kwargs.setdefault("max_retries", 0)
    return anthropic.Anthropic(api_key="test-key", base_url=server.base_url, **kwargs)


def async_client(server: FakeAnthropicServer, **kwargs: Any) -> anthropic.AsyncAnthropic:
    kwargs.setdefault("max_retries", 0)
    return anthropic.AsyncAnthropic(api_key="test-key", base_url=server.base_url, **kwargs)


def create(c: anthropic.Anthropic, **kwargs: Any) -> anthropic.types.Message:
    params: dict[str, Any] = {"model": MODEL, "max_tokens": 256, "messages": USER, **kwargs}
    return c.messages.create(**params)


# --------------------------------------------------------------------------- #
# Non-streaming replies
# --------------------------------------------------------------------------- #


def test_text_reply(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("The dedupe step is in place."))
    with client(fake_anthropic) as c:
        message = create(c)

    assert message.type == "message"
    assert message.role == "assistant"
    assert message.model == MODEL
    assert message.id == "msg_fake_0001"
    assert message.stop_reason == "end_turn"
    assert message.stop_sequence is None
    assert len(message.content) == 1
    block = message.content[0]
    assert isinstance(block, TextBlock)
    assert block.text == "The dedupe step is in place."
    assert message.usage.input_tokens == estimate_input_tokens({"messages": USER})
    assert message.usage.output_tokens >= 1
    assert message.usage.cache_creation_input_tokens == 0
    assert message.usage.cache_read_input_tokens == 0


def test_usage_override_is_honoured(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("hi", usage={"input_tokens": 1234, "output_tokens": 56}))
    with client(fake_anthropic) as c:
        message = create(c)
    assert message.usage.input_tokens == 1234
    assert message.usage.output_tokens == 56


def test_tool_reply_parsed_into_tool_use_blocks(fake_anthropic: FakeAnthropicServer) -> None:
    jobs = {"jobs": [{"name": "Dedupe", "adaptor": "@openfn/language-common@latest"}]}
    fake_anthropic.queue(
        tool_reply(
            ("add_jobs", jobs),
            ToolUse("remove_jobs", {"keys": ["old-step"]}),
            text="Adding the step.",
        ),
        tool_reply(("remove_jobs", {"keys": []})),
    )
    with client(fake_anthropic) as c:
        first = create(c, tools=TOOLS)
        second = create(c, tools=TOOLS)

    assert first.stop_reason == "tool_use"
    assert [b.type for b in first.content] == ["text", "tool_use", "tool_use"]
    assert isinstance(first.content[0], TextBlock)
    assert first.content[0].text == "Adding the step."
    add, remove = first.content[1], first.content[2]
    assert isinstance(add, ToolUseBlock)
    assert isinstance(remove, ToolUseBlock)
    assert (add.id, add.name, add.input) == ("toolu_fake_0001", "add_jobs", jobs)
    assert isinstance(add.input, dict)
    assert (remove.id, remove.name, remove.input) == (
        "toolu_fake_0002",
        "remove_jobs",
        {"keys": ["old-step"]},
    )
    # ids keep counting across replies on the same server
    only = second.content[0]
    assert isinstance(only, ToolUseBlock)
    assert only.id == "toolu_fake_0003"


def test_malformed_tool_reply_non_streaming_input_is_not_an_object(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(malformed_tool_reply("add_jobs", '{"jobs": [}'))
    with client(fake_anthropic) as c:
        message = create(c, tools=TOOLS)
    block = message.content[0]
    assert isinstance(block, ToolUseBlock)
    assert block.name == "add_jobs"
    assert not isinstance(block.input, dict)
    assert block.input == '{"jobs": [}'


def test_callable_reply_sees_the_request(fake_anthropic: FakeAnthropicServer) -> None:
    def echo(body: dict[str, Any]) -> Reply:
        return text_reply(f"you said: {body['messages'][-1]['content']}")

    fake_anthropic.queue(echo)
    with client(fake_anthropic) as c:
        message = create(c)
    assert isinstance(message.content[0], TextBlock)
    assert message.content[0].text == "you said: Add a dedupe step before the upsert."


def test_default_reply_used_when_queue_is_empty(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("scripted"))
    fake_anthropic.default_reply = text_reply("fallback")
    with client(fake_anthropic) as c:
        texts = [create(c).content[0] for _ in range(3)]
    assert [b.text for b in texts if isinstance(b, TextBlock)] == [
        "scripted",
        "fallback",
        "fallback",
    ]


# --------------------------------------------------------------------------- #
# Streaming
# --------------------------------------------------------------------------- #


def test_stream_yields_text_deltas_and_parsed_tool_input(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    args = {"jobs": [{"name": "Dedupe records", "adaptor": "@openfn/language-common@latest"}]}
    fake_anthropic.queue(tool_reply(("add_jobs", args), text="I will add a dedupe step now."))

    text_deltas: list[str] = []
    json_deltas: list[str] = []
    event_types: list[str] = []
    with (
        client(fake_anthropic) as c,
        c.messages.stream(model=MODEL, max_tokens=256, messages=USER, tools=TOOLS) as stream,
    ):
        for event in stream:
            event_types.append(event.type)
            if event.type == "text":
                text_deltas.append(event.text)
            elif event.type == "input_json":
                json_deltas.append(event.partial_json)
        final = stream.get_final_message()

    assert len(text_deltas) >= 5
    assert "".join(text_deltas) == "I will add a dedupe step now."
    assert len([d for d in json_deltas if d]) >= 3
    assert event_types[0] == "message_start"
    assert event_types[-1] == "message_stop"
    assert {"content_block_start", "content_block_delta", "content_block_stop"} <= set(event_types)
    assert "message_delta" in event_types

    assert final.stop_reason == "tool_use"
    tool = final.content[1]
    assert isinstance(tool, ToolUseBlock)
    assert tool.id == "toolu_fake_0001"
    assert tool.input == args
    assert final.usage.output_tokens > 1
    assert fake_anthropic.requests[0].stream is True


def test_stream_text_stream_helper(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("one two three four"))
    with (
        client(fake_anthropic) as c,
        c.messages.stream(model=MODEL, max_tokens=64, messages=USER) as stream,
    ):
        chunks = list(stream.text_stream)
        assert stream.get_final_text() == "one two three four"
        assert stream.request_id == "req_fake_0001"
    assert chunks == ["one ", "two ", "three ", "four"]


def test_streaming_malformed_tool_input_raises(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(malformed_tool_reply("add_jobs", '{"jobs": [{"name": "A"}, }'))
    with (
        client(fake_anthropic) as c,
        pytest.raises(ValueError, match="Unable to parse tool parameter JSON"),
        c.messages.stream(model=MODEL, max_tokens=64, messages=USER, tools=TOOLS) as stream,
    ):
        stream.get_final_message()


def test_stream_error_event_mid_stream(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(stream_error_reply("overloaded_error", "Overloaded", partial_text="Half"))
    seen: list[str] = []
    with (
        client(fake_anthropic) as c,
        pytest.raises(anthropic.APIStatusError) as info,
        c.messages.stream(model=MODEL, max_tokens=64, messages=USER) as stream,
    ):
        seen.extend(stream.text_stream)
    assert seen == ["Half"]
    assert info.value.type == "overloaded_error"


async def test_async_client_create_and_stream(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("async hello"), tool_reply(("remove_jobs", {"keys": ["a"]})))
    async with async_client(fake_anthropic) as c:
        message = await c.messages.create(model=MODEL, max_tokens=64, messages=USER)
        async with c.messages.stream(
            model=MODEL, max_tokens=64, messages=USER, tools=TOOLS
        ) as stream:
            final = await stream.get_final_message()

    assert isinstance(message.content[0], TextBlock)
    assert message.content[0].text == "async hello"
    tool = final.content[0]
    assert isinstance(tool, ToolUseBlock)
    assert tool.input == {"keys": ["a"]}
    assert [r.stream for r in fake_anthropic.requests] == [False, True]


# --------------------------------------------------------------------------- #
# Errors, retries, timeouts
# --------------------------------------------------------------------------- #


def test_overloaded_then_success_is_retried(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(
        error_reply(529, "overloaded_error", "Overloaded", retry_after=0.01),
        text_reply("second time lucky"),
    )
    started = time.monotonic()
    with client(fake_anthropic, max_retries=2) as c:
        message = create(c)
    elapsed = time.monotonic() - started

    assert isinstance(message.content[0], TextBlock)
    assert message.content[0].text == "second time lucky"
    requests = fake_anthropic.requests
    assert len(requests) == 2
    assert [r.retry_count for r in requests] == [0, 1]
    # The SDK honoured retry-after-ms (10 ms) instead of its >= 0.375 s default backoff.
    assert elapsed < 0.3


def test_rate_limit_without_retries_raises(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(error_reply(429, "rate_limit_error", "Slow down", retry_after=3))
    with (
        client(fake_anthropic, max_retries=0) as c,
        pytest.raises(anthropic.RateLimitError) as info,
    ):
        create(c)
    err = info.value
    assert err.status_code == 429
    assert err.type == "rate_limit_error"
    assert err.api_message == "Slow down"
    assert err.request_id == "req_fake_0001"
    assert err.response.headers["retry-after"] == "3"
    assert err.response.headers["retry-after-ms"] == "3000"
    assert len(fake_anthropic.requests) == 1


@pytest.mark.parametrize(
    ("reply", "exc_type"),
    [
        (overloaded_reply(), anthropic.OverloadedError),
        (error_reply(500, "api_error"), anthropic.InternalServerError),
        (error_reply(400, "invalid_request_error", "bad"), anthropic.BadRequestError),
        (error_reply(401, "authentication_error"), anthropic.AuthenticationError),
    ],
)
def test_error_statuses_map_to_sdk_exceptions(
    fake_anthropic: FakeAnthropicServer, reply: Reply, exc_type: type[Exception]
) -> None:
    fake_anthropic.queue(reply)
    with client(fake_anthropic) as c, pytest.raises(exc_type):
        create(c)


def test_should_retry_header_is_obeyed(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(error_reply(529, "overloaded_error", retry_after=0.01, should_retry=False))
    with client(fake_anthropic, max_retries=3) as c, pytest.raises(anthropic.OverloadedError):
        create(c)
    assert len(fake_anthropic.requests) == 1


def test_delay_reply_triggers_client_timeout(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(delay_reply(3.0, text_reply("too late")), text_reply("on time"))
    started = time.monotonic()
    with client(fake_anthropic, timeout=0.5, max_retries=0) as c:
        with pytest.raises(anthropic.APITimeoutError):
            create(c)
        elapsed = time.monotonic() - started
        # the server keeps serving while the delayed handler is still asleep
        message = create(c)

    assert 0.4 < elapsed < 2.0
    assert isinstance(message.content[0], TextBlock)
    assert message.content[0].text == "on time"


async def test_delay_reply_async_timeout(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(delay_reply(3.0, text_reply("too late")))
    async with async_client(fake_anthropic, timeout=0.3) as c:
        with pytest.raises(anthropic.APITimeoutError):
            await c.messages.create(model=MODEL, max_tokens=64, messages=USER)


def test_empty_queue_fails_loudly(fake_anthropic: FakeAnthropicServer) -> None:
    with (
        client(fake_anthropic, max_retries=2) as c,
        pytest.raises(anthropic.InternalServerError, match="no scripted reply"),
    ):
        create(c)
    # x-should-retry: false stops the SDK from retrying a scripting mistake
    assert len(fake_anthropic.requests) == 1
    assert len(fake_anthropic.errors) == 1
    assert "no scripted reply" in fake_anthropic.errors[0]


def test_raising_callable_fails_loudly(fake_anthropic: FakeAnthropicServer) -> None:
    def broken(body: dict[str, Any]) -> Reply:
        raise KeyError("nope")

    fake_anthropic.queue(broken)
    with (
        client(fake_anthropic) as c,
        pytest.raises(anthropic.InternalServerError, match="reply callable raised"),
    ):
        create(c)
    assert fake_anthropic.errors and "KeyError" in fake_anthropic.errors[0]


# --------------------------------------------------------------------------- #
# count_tokens, prompt caching, request log
# --------------------------------------------------------------------------- #


def test_count_tokens(fake_anthropic: FakeAnthropicServer) -> None:
    with client(fake_anthropic) as c:
        counted = c.messages.count_tokens(
            model=MODEL, messages=USER, system=SYSTEM_CACHED, tools=TOOLS
        )
        bare = c.messages.count_tokens(model=MODEL, messages=USER)
    expected = estimate_input_tokens({"messages": USER, "system": SYSTEM_CACHED, "tools": TOOLS})
    assert counted.input_tokens == expected
    assert bare.input_tokens == estimate_input_tokens({"messages": USER})
    assert counted.input_tokens > bare.input_tokens > 0
    assert len(fake_anthropic.count_tokens_requests) == 2
    assert fake_anthropic.requests == []  # count_tokens does not consume scripted replies


def test_cache_accounting_on_identical_prefix(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.default_reply = text_reply("ok")
    other_system = [{**SYSTEM_CACHED[0], "text": "A different prompt. " * 500}]
    with client(fake_anthropic) as c:
        first = create(c, system=SYSTEM_CACHED, tools=TOOLS).usage
        second = create(c, system=SYSTEM_CACHED, tools=TOOLS, messages=[*USER, *USER]).usage
        changed = create(c, system=other_system, tools=TOOLS).usage
        uncached = create(c, system="plain system prompt", tools=TOOLS).usage

    prefix = estimate_input_tokens({"system": SYSTEM_CACHED, "tools": TOOLS})
    assert first.cache_creation_input_tokens == prefix > 0
    assert first.cache_read_input_tokens == 0
    assert first.cache_creation is not None
    assert first.cache_creation.ephemeral_5m_input_tokens == prefix
    assert first.input_tokens == estimate_input_tokens({"messages": USER})

    assert second.cache_creation_input_tokens == 0
    assert second.cache_read_input_tokens == prefix
    assert second.input_tokens == estimate_input_tokens({"messages": [*USER, *USER]})

    assert changed.cache_creation_input_tokens and changed.cache_creation_input_tokens > 0
    assert changed.cache_read_input_tokens == 0

    assert uncached.cache_creation_input_tokens == 0
    assert uncached.cache_read_input_tokens == 0


def test_cache_accounting_in_stream(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.default_reply = text_reply("streamed answer")
    finals = []
    with client(fake_anthropic) as c:
        for _ in range(2):
            with c.messages.stream(
                model=MODEL, max_tokens=64, messages=USER, system=SYSTEM_CACHED
            ) as stream:
                finals.append(stream.get_final_message().usage)
    prefix = estimate_input_tokens({"system": SYSTEM_CACHED})
    assert (finals[0].cache_creation_input_tokens, finals[0].cache_read_input_tokens) == (prefix, 0)
    assert (finals[1].cache_creation_input_tokens, finals[1].cache_read_input_tokens) == (0, prefix)


def test_request_log_captures_body_and_headers(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("ok"))
    tool_choice = {"type": "tool", "name": "add_jobs"}
    with client(fake_anthropic) as c:
        create(
            c,
            system=SYSTEM_CACHED,
            tools=TOOLS,
            tool_choice=tool_choice,
            extra_headers={"anthropic-beta": "fake-beta-1,fake-beta-2"},
        )

    [req] = fake_anthropic.requests
    assert req.method == "POST"
    assert req.path == "/v1/messages"
    assert req.model == MODEL
    assert req.max_tokens == 256
    assert req.system == SYSTEM_CACHED
    assert req.tools == TOOLS
    assert req.tool_choice == tool_choice
    assert req.messages == USER
    assert req.stream is False
    assert req.anthropic_version == ANTHROPIC_API_VERSION
    assert req.anthropic_beta == ["fake-beta-1", "fake-beta-2"]
    assert req.api_key == "test-key"
    assert all(name == name.lower() for name in req.headers)
    assert req.timestamp > 0


def test_env_fixture_points_default_client_at_fake(fake_anthropic_env: FakeAnthropicServer) -> None:
    fake_anthropic_env.queue(text_reply("from env"))
    with anthropic.Anthropic(max_retries=0) as c:
        message = create(c)
    assert isinstance(message.content[0], TextBlock)
    assert message.content[0].text == "from env"


# --------------------------------------------------------------------------- #
# Request validation (raw HTTP: the SDK will not send requests this broken)
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("missing", ["model", "max_tokens", "messages"])
def test_missing_required_field_is_400(fake_anthropic: FakeAnthropicServer, missing: str) -> None:
    fake_anthropic.default_reply = text_reply("should not be used")
    body = {"model": MODEL, "max_tokens": 10, "messages": USER}
    del body[missing]
    r = httpx.post(f"{fake_anthropic.base_url}/v1/messages", json=body, headers={"x-api-key": "k"})
    assert r.status_code == 400
    payload = r.json()
    assert payload["type"] == "error"
    assert payload["error"]["type"] == "invalid_request_error"
    assert missing in payload["error"]["message"]
    assert r.headers["request-id"].startswith("req_fake_")


def test_missing_credentials_is_401(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("should not be used"))
    body = {"model": MODEL, "max_tokens": 10, "messages": USER}
    r = httpx.post(f"{fake_anthropic.base_url}/v1/messages", json=body)
    assert r.status_code == 401
    assert r.json()["error"]["type"] == "authentication_error"
    assert fake_anthropic.pending == 1  # an invalid request consumes no scripted reply
    ok = httpx.post(f"{fake_anthropic.base_url}/v1/messages", json=body, headers={"x-api-key": "k"})
    assert ok.status_code == 200
    assert fake_anthropic.requests[-1].api_key == "k"


def test_unknown_route_is_404_in_api_error_shape(fake_anthropic: FakeAnthropicServer) -> None:
    r = httpx.get(f"{fake_anthropic.base_url}/v1/nope", headers={"x-api-key": "k"})
    assert r.status_code == 404
    assert r.json()["error"]["type"] == "not_found_error"


def test_raw_reply_passes_through(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(
        raw_reply(503, "upstream connect error", {"content-type": "text/plain"}),
        raw_reply(200, "not json at all", {"content-type": "application/json"}),
    )
    with client(fake_anthropic) as c:
        with pytest.raises(anthropic.ServiceUnavailableError) as info:
            create(c)
        assert info.value.body == "upstream connect error"
        # SDK 2.10.0 surfaces an undecodable 200 body as json.JSONDecodeError (a ValueError)
        with pytest.raises(ValueError):
            create(c)


# --------------------------------------------------------------------------- #
# Lifecycle
# --------------------------------------------------------------------------- #


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_start_is_fast_and_stop_releases_port_and_thread() -> None:
    threads_before = set(threading.enumerate())
    server = FakeAnthropicServer()
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.base_url
    started = time.monotonic()
    server.start()
    assert time.monotonic() - started < 1.0
    port = int(server.base_url.rsplit(":", 1)[1])
    assert server.running and _port_open(port)

    server.queue(delay_reply(30, text_reply("never")))
    with client(server, timeout=0.2) as c, pytest.raises(anthropic.APITimeoutError):
        create(c)

    stopping = time.monotonic()
    server.stop()
    assert time.monotonic() - stopping < 2.0  # a sleeping delay_reply does not hold up stop()
    assert not server.running
    assert not _port_open(port)
    assert set(threading.enumerate()) - threads_before == set()
    server.stop()  # idempotent


def test_reset_clears_state() -> None:
    with FakeAnthropicServer() as server:
        server.queue(tool_reply(("add_jobs", {"jobs": []})), text_reply("left over"))
        server.default_reply = text_reply("default")
        with client(server) as c:
            create(c)
        assert server.pending == 1
        with pytest.raises(AssertionError, match="unused"):
            server.assert_all_consumed()

        server.reset()
        assert (server.pending, server.requests, server.errors) == (0, [], [])
        assert server.default_reply is None
        server.assert_all_consumed()
        server.queue(tool_reply(("add_jobs", {"jobs": []})))
        with client(server) as c:
            message = create(c)
        block = message.content[0]
        assert isinstance(block, ToolUseBlock)
        assert block.id == "toolu_fake_0001"  # counters restart
        assert message.id == "msg_fake_0001"
