"""Claude on Amazon Bedrock and Vertex AI: the SDK's own clients, built by the factory
from the provider settings, run a turn against the strict fake answering each
platform's paths, auth and framing; caching and usage accounting are the Claude API's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from agents.models import AnthropicModel, ModelError
from agents.models.catalog import DEFAULT_MODEL_IDS
from agents.models.factory import ModelConfig, build_models
from agents.models.providers import CloudSettings
from tests.agents.helpers import run
from tests.fakes.anthropic_server import stream_error_reply, text_reply, tool_reply
from tests.fakes.platforms import BEDROCK_VERSION, VERTEX_VERSION, FakeCloudServer

AWS_ENV = ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_CONFIG_FILE")


@pytest.fixture
def cloud() -> Iterator[FakeCloudServer]:
    with FakeCloudServer() as server:
        yield server


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch, cloud: FakeCloudServer) -> None:
    """Fake AWS credentials in the environment, as the AWS credential chain reads them."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", cloud.aws_access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", cloud.aws_secret_key)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name in AWS_ENV:
        monkeypatch.delenv(name, raising=False)


def _claude(config: ModelConfig) -> AnthropicModel:
    model = build_models(config)["planner"]
    assert isinstance(model, AnthropicModel)
    return model


def bedrock(cloud: FakeCloudServer, **overrides: Any) -> AnthropicModel:
    return _claude(
        ModelConfig(
            provider="bedrock",
            cloud=CloudSettings(region=cloud.aws_region, base_url=cloud.base_url),
            timeout_s=5,
            **{"max_retries": 0, **overrides},
        )
    )


def vertex(cloud: FakeCloudServer, token: str | None = None, **overrides: Any) -> AnthropicModel:
    return _claude(
        ModelConfig(
            provider="vertex",
            cloud=CloudSettings(
                region=cloud.vertex_region,
                project_id=cloud.vertex_project,
                access_token=SecretStr(token or cloud.vertex_token),
                base_url=cloud.vertex_base_url,
            ),
            timeout_s=5,
            **{"max_retries": 0, **overrides},
        )
    )


def _script(cloud: FakeCloudServer) -> None:
    cloud.queue(tool_reply(("update_workflow", {"name": "Intake"})), text_reply("Renamed it."))


async def _a_turn_runs_and_is_cached_and_priced(cloud: FakeCloudServer, model: Any) -> Any:
    _script(cloud)
    outcome = await run(model, "rename the workflow to Intake")
    await model.aclose()
    assert outcome.doc.structure.name == "Intake"
    assert outcome.of("message")[-1]["text"] == "Renamed it."
    assert cloud.rejected == [] and cloud.errors == []
    calls = [c for c in outcome.runtime.usage.calls if c.role == "planner"]
    assert len(calls) == 2
    assert calls[0].cache_creation_input_tokens > 0  # the same breakpoints as on the API
    assert calls[1].cache_read_input_tokens > 0
    assert all(c.cost_usd is not None and c.cost_usd > 0 for c in calls)  # priced
    return outcome


async def test_a_turn_on_bedrock_is_signed_streamed_as_event_stream_cached_and_priced(
    cloud: FakeCloudServer, aws_credentials: None
) -> None:
    model = bedrock(cloud)
    assert model.models["planner"] == "anthropic.claude-opus-4-5-20251101-v1:0"
    await _a_turn_runs_and_is_cached_and_priced(cloud, model)
    for request in cloud.requests:
        assert request.path == (
            "/model/anthropic.claude-opus-4-5-20251101-v1:0/invoke-with-response-stream"
        )
        assert request.headers["authorization"].startswith(
            f"AWS4-HMAC-SHA256 Credential={cloud.aws_access_key}/"
        )
        assert request.json["anthropic_version"] == BEDROCK_VERSION
        assert "model" not in request.json and "stream" not in request.json


async def test_bedrock_refuses_a_signature_made_with_another_secret(
    cloud: FakeCloudServer, aws_credentials: None
) -> None:
    # The SDK keeps its boto3 session (and its credentials) per process, so the other
    # secret is the server's: same key id and region, a signature that cannot match.
    with FakeCloudServer(aws_secret_key="a-different-secret") as other:
        model = bedrock(other)
        _script(other)
        with pytest.raises(ModelError) as info:
            await run(model, "rename the workflow to Intake")
        await model.aclose()
        assert info.value.details["status"] == 403
        assert other.pending == 2  # refused before any reply was used


async def test_an_error_inside_a_bedrock_event_stream_is_retried_like_on_the_api(
    cloud: FakeCloudServer, aws_credentials: None
) -> None:
    cloud.queue(stream_error_reply("overloaded_error"), text_reply("Hello."))
    model = bedrock(cloud)
    outcome = await run(model, "hello")
    await model.aclose()
    assert outcome.of("message")[-1]["text"] == "Hello."
    assert len(cloud.requests) == 2


async def test_a_turn_on_vertex_sends_the_token_and_its_version_and_is_cached_and_priced(
    cloud: FakeCloudServer,
) -> None:
    model = vertex(cloud)
    assert model.models["planner"] == "claude-opus-4-5@20251101"
    await _a_turn_runs_and_is_cached_and_priced(cloud, model)
    prefix = f"/v1/projects/{cloud.vertex_project}/locations/{cloud.vertex_region}"
    for request in cloud.requests:
        assert request.path == (
            f"{prefix}/publishers/anthropic/models/claude-opus-4-5@20251101:streamRawPredict"
        )
        assert request.headers["authorization"] == f"Bearer {cloud.vertex_token}"
        assert request.json["anthropic_version"] == VERTEX_VERSION
        assert "model" not in request.json and request.json["stream"] is True


async def test_vertex_refuses_a_wrong_token(cloud: FakeCloudServer) -> None:
    model = vertex(cloud, token="ya29.someone-else")
    _script(cloud)
    with pytest.raises(ModelError) as info:
        await run(model, "rename the workflow to Intake")
    await model.aclose()
    assert info.value.details["status"] == 401
    assert cloud.pending == 2


def test_a_provider_needs_no_anthropic_key_and_maps_every_role() -> None:
    config = ModelConfig(
        provider="vertex",
        cloud=CloudSettings(region="us-east5", project_id="p", access_token=SecretStr("t")),
    )
    assert config.uses_anthropic
    claude = _claude(config)
    assert claude.models == {
        "router": "claude-haiku-4-5@20251001",
        "planner": "claude-opus-4-5@20251101",
        "job_code": "claude-sonnet-4-6",
    }
    assert set(claude.models) == set(DEFAULT_MODEL_IDS)


def test_the_settings_name_the_provider_and_its_place(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from app.ai import model_config
    from app.settings import Settings

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLANWRIGHT_PROVIDER", "bedrock")
    monkeypatch.setenv("PLANWRIGHT_CLOUD_REGION", "eu-west-1")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    settings = Settings()
    assert settings.uses_anthropic  # Claude on Bedrock, no Anthropic key needed
    config = model_config(settings)
    assert (config.provider, config.cloud.region) == ("bedrock", "eu-west-1")
    with pytest.raises(ValueError):
        Settings(provider="azure")  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
async def test_the_retry_after_cap_holds_on_every_provider(
    cloud: FakeCloudServer, aws_credentials: None, provider: str
) -> None:
    from agents.models.deadline import RetryWaitTooLongError
    from tests.fakes.anthropic_server import rate_limit_reply

    cloud.queue(rate_limit_reply(retry_after=900))
    build = bedrock if provider == "bedrock" else vertex
    model = build(cloud, max_retries=3, max_wait_s=2)
    with pytest.raises(RetryWaitTooLongError) as info:
        await run(model, "hello")
    await model.aclose()
    assert info.value.details["retry_after_s"] == 900
    assert len(cloud.requests) == 1  # neither waited out nor retried


async def test_a_turn_on_bedrock_with_an_api_key_sends_it_as_a_bearer_token(
    cloud: FakeCloudServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``AWS_BEARER_TOKEN_BEDROCK`` (a Bedrock API key) instead of SigV4: the SDK sends
    it as ``Authorization: Bearer``, and the fake checks it the way Bedrock does."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", *AWS_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", cloud.bedrock_api_key)
    await _a_turn_runs_and_is_cached_and_priced(cloud, bedrock(cloud))
    assert {r.headers["authorization"] for r in cloud.requests} == {
        f"Bearer {cloud.bedrock_api_key}"
    }
    assert all("x-amz-date" not in r.headers for r in cloud.requests)  # not signed

    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "ABSK-someone-elses-key")
    model = bedrock(cloud)
    with pytest.raises(ModelError) as info:
        await run(model, "hello")
    await model.aclose()
    assert info.value.details["status"] == 403


async def test_on_vertex_budgets_are_counted_by_its_count_tokens_endpoint(
    cloud: FakeCloudServer,
) -> None:
    from agents.models.anthropic_count import ApiTokenCounter
    from agents.models.factory import token_counter
    from agents.tokens import local_token_counter

    text = "Fetch the referral from the clinic portal, then check the member's coverage."
    model = vertex(cloud)
    counter = token_counter({"router": model, "planner": model, "job_code": model})
    assert isinstance(counter, ApiTokenCounter)
    assert await counter.count(text) == local_token_counter().count_now(text)
    await model.aclose()
    probe, counted = cloud.count_tokens_requests
    assert cloud.requests == [] and cloud.rejected == []
    for request in (probe, counted):
        assert request.path == (
            f"/v1/projects/{cloud.vertex_project}/locations/{cloud.vertex_region}"
            "/publishers/anthropic/models/count-tokens:rawPredict"
        )
        assert request.headers["authorization"] == f"Bearer {cloud.vertex_token}"
        assert request.json["anthropic_version"] == VERTEX_VERSION
        assert request.json["model"] == "claude-opus-4-5@20251101"  # the body names it
    assert counted.json["messages"] == [{"role": "user", "content": text}]


async def test_vertex_counting_is_as_strict_as_vertex(cloud: FakeCloudServer) -> None:
    """The SDK's own ``anthropic_version`` default, a token that is not the fake's, or an
    API id where a Vertex id belongs are refused as Vertex refuses them."""
    import anthropic

    model = vertex(cloud)
    client = model.client
    message = [{"role": "user", "content": "hi"}]
    with pytest.raises(anthropic.BadRequestError, match="anthropic_version"):
        await client.messages.count_tokens(model="claude-opus-4-5@20251101", messages=message)  # type: ignore[arg-type]
    with pytest.raises(anthropic.NotFoundError):
        await client.messages.count_tokens(
            model="claude-opus-4-5",
            messages=message,  # type: ignore[arg-type]
            extra_body={"anthropic_version": VERTEX_VERSION},
        )
    await model.aclose()
    stranger = vertex(cloud, token="ya29.someone-else")
    with pytest.raises(anthropic.AuthenticationError):
        await stranger.client.messages.count_tokens(
            model="claude-opus-4-5@20251101",
            messages=message,  # type: ignore[arg-type]
            extra_body={"anthropic_version": VERTEX_VERSION},
        )
    await stranger.aclose()


async def test_on_bedrock_budgets_are_counted_locally_with_the_shipped_tokenizer(
    cloud: FakeCloudServer, aws_credentials: None
) -> None:
    """Bedrock has no counting endpoint the SDK reaches: budgets use the local BPE, and a
    turn whose message is counted sends Bedrock nothing but its model calls."""
    import anthropic

    from agents.models.factory import token_counter
    from agents.tokens import LOCAL_TOKENIZER, LocalTokenCounter
    from tests.agents.helpers import runtime_for

    model = bedrock(cloud)
    counter = token_counter({"router": model, "planner": model, "job_code": model})
    assert isinstance(counter, LocalTokenCounter) and counter.name == LOCAL_TOKENIZER
    with pytest.raises(anthropic.AnthropicError, match="not supported in Bedrock"):
        await model.client.messages.count_tokens(model="m", messages=[])
    cloud.queue(text_reply("It fetches referrals."))
    runtime = runtime_for(model, max_message_tokens=200)
    runtime.tokens = counter
    history = [
        {"role": "user", "content": "what triggers it?"},
        {"role": "assistant", "content": "A webhook."},
    ]
    outcome = await run(model, "what does each step do " * 12, history=history, runtime=runtime)
    await model.aclose()
    assert outcome.of("message")[-1]["text"] == "It fetches referrals."
    assert cloud.count_tokens_requests == [] and cloud.rejected == []
    (request,) = cloud.requests
    assert request.path.endswith("/invoke-with-response-stream")
    assert request.json["messages"][0]["content"] == "what triggers it?"  # history sent
