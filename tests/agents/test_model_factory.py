"""The one model factory: Claude with a key, the offline model without."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from agents.models import AnthropicModel
from agents.models.factory import DEFAULT_MODEL_IDS, ModelConfig, build_models
from agents.models.offline import OfflineModel


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
        model_ids={**DEFAULT_MODEL_IDS, "planner": "claude-test"},
        timeout_s=5,
        max_retries=0,
    )
    models = build_models(config)
    claude = models["router"]
    assert isinstance(claude, AnthropicModel) and models["job_code"] is claude
    assert claude.models["planner"] == "claude-test"
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
