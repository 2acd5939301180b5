"""The fake refuses what the real Messages API refuses, and caches what it caches."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    context_exceeded_reply,
    empty_reply,
    refusal_reply,
    text_reply,
    tool_reply,
    truncated_tool_reply,
)
from tests.fakes.models import known_models, lookup

MODEL = "claude-opus-4-5"  # minimum cacheable prefix 4,096 tokens
TOOL: Any = {
    "name": "remove_jobs",
    "description": "Remove steps.",
    "input_schema": {"type": "object", "properties": {"keys": {"type": "array"}}},
}
USER: Any = [{"role": "user", "content": "Remove the send step."}]
EPHEMERAL = {"type": "ephemeral"}


def client(server: FakeAnthropicServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="test-key", base_url=server.base_url, max_retries=0, timeout=30.0
    )


def create(server: FakeAnthropicServer, **kwargs: Any) -> anthropic.types.Message:
    params: dict[str, Any] = {"model": MODEL, "max_tokens": 256, "messages": USER, **kwargs}
    with client(server) as c:
        return c.messages.create(**params)


def rejected(server: FakeAnthropicServer, **kwargs: Any) -> anthropic.APIStatusError:
    with pytest.raises(anthropic.APIStatusError) as info:
        create(server, **kwargs)
    return info.value


def error_of(error: anthropic.APIStatusError) -> dict[str, Any]:
    """The ``error`` object of the API's error body."""
    body = error.body
    assert isinstance(body, dict) and body["type"] == "error"
    inner = body["error"]
    assert isinstance(inner, dict)
    return inner


def tool_turn(use_id: str = "toolu_1") -> list[dict[str, Any]]:
    return [
        *USER,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": use_id, "name": "remove_jobs", "input": {}}],
        },
    ]


# -- models ------------------------------------------------------------------ #


@pytest.mark.parametrize(
    "model", ["claude-made-up-1", "claude-sonnet-4-5", "claude-3-opus-20240229"]
)
def test_unknown_or_retired_model_is_404(fake_anthropic: FakeAnthropicServer, model: str) -> None:
    fake_anthropic.default_reply = text_reply("never sent")
    error = rejected(fake_anthropic, model=model)
    assert isinstance(error, anthropic.NotFoundError)
    assert error_of(error) == {"type": "not_found_error", "message": f"model: {model}"}
    assert fake_anthropic.pending == 0 and fake_anthropic.errors == []


def test_model_table_is_the_sdk_list() -> None:
    models = known_models()
    assert {"claude-opus-4-5", "claude-haiku-4-5", "claude-sonnet-4-6"} <= set(models)
    assert lookup("claude-sonnet-4-5") is None  # past its end-of-life date in the SDK
    assert lookup("claude-opus-4-5") is not None


def test_max_tokens_over_the_model_limit_is_400(fake_anthropic: FakeAnthropicServer) -> None:
    error = rejected(fake_anthropic, max_tokens=64_001)
    assert error.status_code == 400
    assert "maximum allowed number of output tokens" in str(error.body)


def test_a_rejected_request_consumes_no_scripted_reply(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("kept"))
    rejected(fake_anthropic, model="nope")
    assert fake_anthropic.pending == 1
    assert create(fake_anthropic).content[0].text == "kept"  # type: ignore[union-attr]


# -- request types and rules ------------------------------------------------- #


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"messages": [{"role": "robot", "content": "hi"}]}, "role"),
        ({"messages": [{"role": "user", "content": [{"type": "text"}]}]}, "text"),
        ({"messages": []}, "at least one message"),
        ({"messages": [{"role": "user", "content": ""}]}, "non-empty"),
        ({"extra_body": {"temperatur": 0.5}}, "temperatur: Extra inputs are not permitted"),
        ({"tools": [{**TOOL, "name": "remove jobs"}]}, "String should match pattern"),
        ({"tools": [TOOL, TOOL]}, "Tool names must be unique"),
        (
            {"tools": [{**TOOL, "input_schema": {"type": "object", "properties": 3}}]},
            "JSON schema is invalid",
        ),
        ({"tools": [{**TOOL, "input_schema": {"type": "array"}}]}, "input_schema.type"),
        ({"tool_choice": {"type": "tool", "name": "remove_jobs"}}, "only be specified"),
        (
            {"tools": [TOOL], "tool_choice": {"type": "tool", "name": "add_jobs"}},
            "'add_jobs' not found",
        ),
    ],
)
def test_bodies_the_api_rejects_are_400(
    fake_anthropic: FakeAnthropicServer, kwargs: dict[str, Any], fragment: str
) -> None:
    error = rejected(fake_anthropic, **kwargs)
    assert isinstance(error, anthropic.BadRequestError)
    assert error_of(error)["type"] == "invalid_request_error"
    assert fragment in error_of(error)["message"]
    assert fake_anthropic.rejected[-1][0] == 400


def test_tool_use_without_its_result_is_400(fake_anthropic: FakeAnthropicServer) -> None:
    messages = [*tool_turn(), {"role": "user", "content": "and?"}]
    error = rejected(fake_anthropic, tools=[TOOL], messages=messages)
    assert "`tool_use` ids were found without `tool_result` blocks" in error_of(error)["message"]


def test_tool_result_after_other_blocks_is_400(fake_anthropic: FakeAnthropicServer) -> None:
    answer = {
        "role": "user",
        "content": [
            {"type": "text", "text": "here"},
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"},
        ],
    }
    error = rejected(fake_anthropic, tools=[TOOL], messages=[*tool_turn(), answer])
    assert "must come first" in error_of(error)["message"]


def test_tool_result_for_an_unknown_call_is_400(fake_anthropic: FakeAnthropicServer) -> None:
    answer = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"},
            {"type": "tool_result", "tool_use_id": "toolu_9", "content": "done"},
        ],
    }
    error = rejected(fake_anthropic, tools=[TOOL], messages=[*tool_turn(), answer])
    assert "unexpected `tool_use_id`" in error_of(error)["message"]


def test_a_well_formed_tool_exchange_is_accepted(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("Removed."))
    answer = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"},
            {"type": "text", "text": "thanks"},
        ],
    }
    create(fake_anthropic, tools=[TOOL], messages=[*tool_turn(), answer])
    assert fake_anthropic.rejected == []


def test_more_than_four_breakpoints_is_400(fake_anthropic: FakeAnthropicServer) -> None:
    system = [{"type": "text", "text": f"part {i}", "cache_control": EPHEMERAL} for i in range(4)]
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": EPHEMERAL}]}
    ]
    error = rejected(fake_anthropic, system=system, messages=messages)
    assert "A maximum of 4 blocks with cache_control may be provided. Found 5." in str(error.body)


def test_prompt_over_the_context_window_is_400(fake_anthropic: FakeAnthropicServer) -> None:
    huge = [{"role": "user", "content": "word " * 250_000}]  # ~250K BPE tokens
    error = rejected(fake_anthropic, messages=huge)
    assert "prompt is too long" in error_of(error)["message"]
    fake_anthropic.queue(context_exceeded_reply())
    scripted = rejected(fake_anthropic)
    assert scripted.status_code == 400 and "prompt is too long" in str(scripted.body)


# -- caching ------------------------------------------------------------------ #


def _system(words: int) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "planner rules " * words, "cache_control": EPHEMERAL}]


def test_prefix_under_the_model_minimum_is_not_cached(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.default_reply = text_reply("ok")
    for _ in range(2):
        usage = create(fake_anthropic, system=_system(700)).usage  # ~1,400 tokens < 4,096
    assert usage.cache_creation_input_tokens == 0 and usage.cache_read_input_tokens == 0
    usage = create(fake_anthropic, model="claude-opus-4-8", system=_system(700)).usage
    assert usage.cache_creation_input_tokens  # the same prefix is enough for a 1,024 minimum


def test_rolling_breakpoint_reads_the_earlier_rounds(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.default_reply = text_reply("ok")
    system = _system(2500)  # ~5,000 tokens

    def mark(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        last = messages[-1]
        blocks = [{"type": "text", "text": last["content"], "cache_control": EPHEMERAL}]
        return [*messages[:-1], {**last, "content": blocks}]

    round_one = [{"role": "user", "content": "structure " * 400}]
    first = create(fake_anthropic, system=system, messages=mark(round_one)).usage
    assert first.cache_read_input_tokens == 0
    written = first.cache_creation_input_tokens
    assert written and written > 5000 and first.input_tokens == 0

    round_two = [
        *round_one,
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "more"},
    ]
    second = create(fake_anthropic, system=system, messages=mark(round_two)).usage
    assert second.cache_read_input_tokens == written  # the moved breakpoint finds round one
    assert second.cache_creation_input_tokens and second.cache_creation_input_tokens < 50

    edited = [{"role": "user", "content": "structure " * 399 + "changed "}]
    third = create(fake_anthropic, system=system, messages=mark(edited)).usage
    # only the identical prefix (tools + system) is read; the edited message is written anew
    assert third.cache_read_input_tokens == create_tokens(system)
    assert third.cache_creation_input_tokens and third.cache_creation_input_tokens > 390


def create_tokens(system: list[dict[str, Any]]) -> int:
    from tests.fakes.cache import estimate_input_tokens

    return estimate_input_tokens({"system": system})


def test_system_breakpoint_without_messages_breakpoint_caches_only_the_system(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.default_reply = text_reply("ok")
    system = _system(2500)
    create(fake_anthropic, system=system)
    usage = create(
        fake_anthropic, system=system, messages=[{"role": "user", "content": "x " * 4000}]
    ).usage
    assert usage.cache_read_input_tokens == create_tokens(system)
    assert usage.input_tokens >= 2000


# -- scripted stop reasons ---------------------------------------------------- #


def test_replies_are_cut_at_max_tokens(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(tool_reply(("remove_jobs", {"keys": ["send-" + "x" * 200]})))
    with (
        client(fake_anthropic) as c,
        c.messages.stream(model=MODEL, max_tokens=20, messages=USER, tools=[TOOL]) as stream,
    ):
        message = stream.get_final_message()
    assert message.stop_reason == "max_tokens"
    assert message.usage.output_tokens == 20
    cut = message.content[0]
    assert cut.type == "tool_use"
    # the SDK completes the partial JSON (dropping the unfinished string): only
    # stop_reason tells that the call was cut
    assert cut.input == {"keys": []}


def test_scripted_truncation_refusal_and_empty_end_turn(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        truncated_tool_reply("remove_jobs", '{"keys": ["send"'),
        refusal_reply("I can't help with that."),
        empty_reply(),
    )
    with client(fake_anthropic) as c:
        finals = []
        for _ in range(3):
            with c.messages.stream(model=MODEL, max_tokens=64, messages=USER, tools=[TOOL]) as s:
                finals.append(s.get_final_message())
    assert finals[0].stop_reason == "max_tokens"
    assert finals[0].content[0].input == {"keys": ["send"]}  # type: ignore[union-attr]
    assert finals[1].stop_reason == "refusal"
    assert finals[1].content[0].text == "I can't help with that."  # type: ignore[union-attr]
    assert (finals[2].stop_reason, finals[2].content) == ("end_turn", [])


def test_usage_block_has_the_real_fields(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("ok"))
    usage = create(fake_anthropic).usage
    assert usage.cache_creation is not None
    assert usage.service_tier == "standard"
    assert usage.cache_creation_input_tokens == 0 and usage.cache_read_input_tokens == 0
