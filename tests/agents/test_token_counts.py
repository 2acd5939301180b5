"""Budgets count tokens: the Messages API's ``count_tokens`` with a key (here the strict
fake, which counts with the same BPE), the local BPE tokenizer without."""

from __future__ import annotations

from agents.models import ScriptedModel
from agents.models.anthropic_count import ApiTokenCounter
from agents.models.factory import token_counter
from agents.tokens import LOCAL_TOKENIZER, LocalTokenCounter, local_token_counter
from tests.agents.helpers import claude, run, runtime_for
from tests.fakes.anthropic_server import FakeAnthropicServer, text_reply

TEXT = "Fetch the referral from the clinic portal, then check the member's coverage."


def test_the_local_counter_is_a_bpe_not_characters_over_four() -> None:
    counter = local_token_counter()
    assert counter.name == LOCAL_TOKENIZER
    assert counter.count_now("") == 0
    assert counter.count_now("hello world") == 2  # cl100k_base: "hello", " world"
    json_text = '{"key": "check-coverage", "adaptor": "http", "has_code": false}'
    assert counter.count_now(json_text) > len(json_text) / 4  # JSON is dense in BPE tokens
    cut = counter.cut(TEXT, 5)
    assert TEXT.startswith(cut) and counter.count_now(cut) == 5


async def test_with_a_key_budgets_are_counted_by_the_api_once_per_text(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    model = claude(fake_anthropic)
    counter = token_counter({"router": model, "planner": model, "job_code": model})
    assert isinstance(counter, ApiTokenCounter)
    assert await counter.count(TEXT) == local_token_counter().count_now(TEXT)
    assert await counter.count(TEXT) == local_token_counter().count_now(TEXT)
    sent = fake_anthropic.count_tokens_requests
    assert len(sent) == 2  # the framing probe once, then the text once: counts are kept
    assert sent[1].json["messages"] == [{"role": "user", "content": TEXT}]
    assert sent[1].json["model"] == model.model_for("planner")
    await model.aclose()


async def test_a_failing_count_endpoint_falls_back_to_the_local_count(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    model = claude(fake_anthropic)
    fake_anthropic.stop()  # nothing answers: the count must not stop the turn
    counter = ApiTokenCounter(model)
    assert await counter.count(TEXT) == local_token_counter().count_now(TEXT)
    await model.aclose()


async def test_without_a_key_the_local_counter_counts() -> None:
    offline = ScriptedModel([])
    assert isinstance(token_counter({"planner": offline}), LocalTokenCounter)


async def test_a_turn_with_a_key_counts_its_message_with_the_api(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(text_reply("It fetches referrals."))
    model = claude(fake_anthropic)
    counter = ApiTokenCounter(model)
    history = [
        {"role": "user", "content": "what triggers it?"},
        {"role": "assistant", "content": "A webhook."},
    ]
    long_question = "what does each step do " * 12  # more bytes than the limit: counted
    runtime = runtime_for(model, max_message_tokens=200)
    runtime.tokens = counter
    await run(model, long_question, history=history, runtime=runtime)
    counted = [r.json["messages"][0]["content"] for r in fake_anthropic.count_tokens_requests]
    assert long_question in counted and "what triggers it?" in counted
    assert "A webhook." in counted
    await model.aclose()
