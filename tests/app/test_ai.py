"""The service builds its models through the one factory, from its settings."""

from __future__ import annotations

from agents.models import AnthropicModel
from agents.models.factory import DEFAULT_MODEL_IDS, ModelConfig
from agents.offline import OfflineModel
from app.ai import build_models, model_config
from app.settings import Settings


def test_the_factory_defaults_are_the_settings_defaults() -> None:
    settings = Settings(_env_file=None, anthropic_api_key=None)
    config = model_config(settings)
    defaults = ModelConfig()
    assert dict(config.model_ids) == dict(DEFAULT_MODEL_IDS)
    assert (config.timeout_s, config.max_retries) == (defaults.timeout_s, defaults.max_retries)
    assert isinstance(build_models(settings)["planner"], OfflineModel)


def test_with_a_key_the_service_gets_claude() -> None:
    settings = Settings(
        _env_file=None, anthropic_api_key="sk-test", planner_model="claude-opus-4-6"
    )
    claude = build_models(settings)["planner"]
    assert isinstance(claude, AnthropicModel)
    assert claude.models["planner"] == "claude-opus-4-6"
