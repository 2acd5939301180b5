"""The one model factory: Claude with a key, the offline model without."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pydantic import SecretStr

from agents.models import AnthropicModel
from agents.models.factory import DEFAULT_MODEL_IDS, ModelConfig, build_models
from agents.offline import OfflineModel


def test_without_a_key_every_role_gets_the_one_offline_model() -> None:
    models = build_models(ModelConfig())
    assert set(models) == {"router", "planner", "job_code"}
    assert isinstance(models["planner"], OfflineModel)
    assert len({id(m) for m in models.values()}) == 1
    assert not ModelConfig(api_key=SecretStr("")).uses_anthropic


def test_with_a_key_every_role_gets_claude_with_its_model_id() -> None:
    config = ModelConfig(
        api_key=SecretStr("sk-test"),
        base_url="http://127.0.0.1:9",
        model_ids={**DEFAULT_MODEL_IDS, "planner": "claude-opus-4-6"},
        timeout_s=5,
        max_retries=0,
    )
    models = build_models(config)
    claude = models["router"]
    assert isinstance(claude, AnthropicModel) and models["job_code"] is claude
    assert claude.models["planner"] == "claude-opus-4-6"
    assert (claude.base_url, claude.timeout, claude.max_retries) == ("http://127.0.0.1:9", 5, 0)


def test_from_env_reads_the_service_settings_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    monkeypatch.setenv("PLANWRIGHT_ROUTER_MODEL", "claude-router")
    monkeypatch.setenv("PLANWRIGHT_MODEL_MAX_RETRIES", "7")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    config = ModelConfig.from_env()
    assert config.uses_anthropic and config.api_key is not None
    assert config.api_key.get_secret_value() == "sk-env"
    assert config.model_ids["router"] == "claude-router"
    assert config.model_ids["planner"] == DEFAULT_MODEL_IDS["planner"]
    assert config.max_retries == 7 and config.base_url is None

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("PLANWRIGHT_ANTHROPIC_API_KEY", raising=False)
    assert not ModelConfig.from_env().uses_anthropic


def test_default_ids_are_current_sdk_ids() -> None:
    from agents.models.catalog import DEFAULT_MODEL_IDS, end_of_life, sdk_model_ids

    assert set(DEFAULT_MODEL_IDS.values()) <= set(sdk_model_ids())
    assert all(end_of_life(i) is None for i in DEFAULT_MODEL_IDS.values())


@pytest.mark.parametrize(
    ("model_id", "why"),
    [("claude-made-up-9", "not a known model id"), ("claude-sonnet-4-5", "retired on 2026-11-30")],
)
def test_an_unknown_or_retired_id_fails_when_the_models_are_built(model_id: str, why: str) -> None:
    import datetime as dt

    from agents.models.catalog import UnknownModelError, check_model_ids
    from agents.models.factory import DEFAULT_MODEL_IDS, ModelConfig, build_models

    ids = {**DEFAULT_MODEL_IDS, "planner": model_id}
    with pytest.raises(UnknownModelError) as info:
        check_model_ids(ids, today=dt.date(2026, 12, 1))
    assert info.value.code == "unknown_model"
    assert why in info.value.message and "PLANWRIGHT_PLANNER_MODEL" in info.value.message
    if model_id == "claude-made-up-9":
        with pytest.raises(UnknownModelError):
            build_models(ModelConfig(api_key=SecretStr("k"), model_ids=ids))
    # without a key the offline model runs and the ids do not matter
    assert build_models(ModelConfig(model_ids=ids))["planner"].name == "offline"


def test_a_deprecated_id_still_served_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    import datetime as dt

    from agents.models.catalog import check_model_ids

    check_model_ids({"planner": "claude-sonnet-4-5"}, today=dt.date(2026, 11, 1))
    assert "retires on 2026-11-30" in caplog.text


TODAY = dt.date(2026, 12, 4)


def test_every_offered_id_has_a_price_and_no_retired_id_is_priced() -> None:
    from agents.models.catalog import offered_model_ids, sdk_model_ids
    from agents.usage import DEFAULT_PRICES, price_for

    offered = offered_model_ids(TODAY)
    assert "claude-sonnet-4-5" not in offered and "claude-mythos-preview" not in offered
    assert {"claude-fable-5-2", "claude-opus-4-6", "claude-haiku-4-5-20251001"} <= set(offered)
    assert [i for i in offered if price_for(i, DEFAULT_PRICES) is None] == []
    claude_ids = {k for k in DEFAULT_PRICES if k.startswith("claude-")}
    assert claude_ids <= set(offered)  # nothing retired, nothing the SDK does not know
    assert set(offered) <= set(sdk_model_ids())


@pytest.mark.parametrize(
    ("model_id", "replacement"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-5-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-5-5"),
        ("claude-mythos-preview", "claude-mythos-5-2"),
    ],
)
def test_a_retired_id_is_refused_by_the_settings_with_its_replacement_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, model_id: str, replacement: str
) -> None:
    from pydantic import ValidationError

    from agents.models import catalog
    from app.settings import Settings

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(catalog, "today", lambda: TODAY)
    with pytest.raises(ValidationError) as info:
        Settings(anthropic_api_key="sk-test", job_code_model=model_id)
    text = str(info.value)
    assert "retired on" in text and f"set PLANWRIGHT_JOB_CODE_MODEL={replacement}" in text
    # The day before its end of life it still starts (with a warning in the log).
    eol = catalog.end_of_life(model_id)
    assert eol is not None
    monkeypatch.setattr(catalog, "today", lambda: eol - dt.timedelta(days=1))
    assert Settings(anthropic_api_key="sk-test", job_code_model=model_id).job_code_model == model_id
    # Without Claude (no key, the Claude API) the ids are not used, so not checked.
    monkeypatch.setattr(catalog, "today", lambda: TODAY)
    assert Settings(anthropic_api_key=None, job_code_model=model_id).job_code_model == model_id


@pytest.mark.parametrize(
    ("model_id", "bedrock", "vertex"),
    [
        ("claude-opus-4-5", "anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5@20251101"),
        (
            "claude-haiku-4-5",
            "anthropic.claude-haiku-4-5-20251001-v1:0",
            "claude-haiku-4-5@20251001",
        ),
        ("claude-opus-4-6", "anthropic.claude-opus-4-6-v1", "claude-opus-4-6"),
        ("claude-sonnet-4-6", "anthropic.claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("claude-fable-5-2", "anthropic.claude-fable-5-2", "claude-fable-5-2"),
    ],
)
def test_model_ids_are_mapped_per_provider_and_priced_back(
    model_id: str, bedrock: str, vertex: str
) -> None:
    from agents.models.catalog import api_model_id, provider_model_id
    from agents.usage import DEFAULT_PRICES, price_for

    assert provider_model_id(model_id, "anthropic") == model_id
    assert provider_model_id(model_id, "bedrock") == bedrock
    assert provider_model_id(model_id, "vertex") == vertex
    for provider_id in (bedrock, vertex, f"global.{bedrock}"):
        assert api_model_id(provider_id).startswith(model_id)
        assert price_for(provider_id, DEFAULT_PRICES) == price_for(model_id, DEFAULT_PRICES)


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
def test_a_retired_id_is_refused_at_start_up_on_every_provider(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, provider: str
) -> None:
    """Bedrock and Vertex need no Anthropic key, so their ids are checked without one."""
    from pydantic import ValidationError

    from agents.models import catalog
    from app.settings import Settings

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(catalog, "today", lambda: TODAY)
    with pytest.raises(ValidationError) as info:
        Settings(anthropic_api_key=None, provider=provider, router_model="claude-sonnet-4-5")
    assert "set PLANWRIGHT_ROUTER_MODEL=claude-sonnet-5-5" in str(info.value)


def test_every_offered_id_maps_to_an_id_each_platform_serves_and_prices_back() -> None:
    """Each current id, as Bedrock and Vertex name it, is one the strict fake answers
    as that platform, and its usage is priced as the Claude API id."""
    from agents.models.catalog import api_model_id, end_of_life, offered_model_ids
    from agents.models.catalog import provider_model_id as on
    from agents.usage import DEFAULT_PRICES, price_for
    from tests.fakes.platforms import bedrock_ids, vertex_ids

    current = [i for i in offered_model_ids(TODAY) if end_of_life(i) is None]
    assert current
    served = {"bedrock": bedrock_ids(), "vertex": vertex_ids()}
    for model_id in current:
        for provider, ids in served.items():
            platform_id = on(model_id, provider)  # type: ignore[arg-type]
            assert platform_id in ids, (provider, model_id, platform_id)
            assert api_model_id(platform_id) in (model_id, ids[platform_id])
            assert price_for(platform_id, DEFAULT_PRICES) == price_for(model_id, DEFAULT_PRICES)
