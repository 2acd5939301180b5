"""The one place the chat models are built: Claude with an API key (or on Amazon
Bedrock or Vertex AI, ``PLANWRIGHT_PROVIDER``), the offline model without. The
service (``app.ai``) and the evals both build theirs here.

:func:`build_models` takes a :class:`ModelConfig` of plain values, so callers
with their own settings pass them in; :meth:`ModelConfig.from_env` reads the
same variables as the service's settings (``ANTHROPIC_API_KEY``,
``ANTHROPIC_BASE_URL``, ``PLANWRIGHT_ROUTER_MODEL``, ... and ``.env``) for
callers without settings of their own, such as ``planwright eval run``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import anthropic
from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from agents.models.anthropic import AnthropicModel
from agents.models.base import ChatModel, ModelRole
from agents.models.catalog import DEFAULT_MODEL_IDS, Provider, check_model_ids
from agents.models.providers import CloudSettings, build_client, provider_ids
from agents.tokens import TokenCounter, local_token_counter

ROLES: tuple[ModelRole, ...] = ("router", "planner", "job_code")


@dataclass(frozen=True)
class ModelConfig:
    """What building the models needs: on the Claude API no key means the offline model."""

    api_key: SecretStr | None = None
    base_url: str | None = None
    model_ids: Mapping[ModelRole, str] = field(default_factory=lambda: dict(DEFAULT_MODEL_IDS))
    """Claude API ids; mapped to the provider's own ids when the models are built."""
    timeout_s: float = 120.0
    max_retries: int = 3
    max_wait_s: float | None = 60.0
    """Longest ``retry-after`` waited out; a longer one fails the call."""
    provider: Provider = "anthropic"
    cloud: CloudSettings = field(default_factory=CloudSettings)
    """Where Bedrock or Vertex is reached (unused on the Claude API)."""

    @property
    def uses_anthropic(self) -> bool:
        """Whether the models are Claude (on any provider) rather than the offline model."""
        if self.provider != "anthropic":
            return True
        return self.api_key is not None and bool(self.api_key.get_secret_value())

    @classmethod
    def from_settings(cls, settings: ModelSettings) -> ModelConfig:
        """From settings that name the model variables as the service's settings do."""
        return cls(
            api_key=settings.anthropic_api_key,
            base_url=settings.anthropic_base_url,
            model_ids={
                "router": settings.router_model,
                "planner": settings.planner_model,
                "job_code": settings.job_code_model,
            },
            timeout_s=settings.model_timeout_s,
            max_retries=settings.model_max_retries,
            max_wait_s=settings.model_max_wait_s,
            provider=settings.provider,
            cloud=CloudSettings(
                region=settings.cloud_region,
                project_id=settings.vertex_project_id,
                access_token=settings.vertex_access_token,
                base_url=settings.cloud_base_url,
            ),
        )

    @classmethod
    def from_env(cls) -> ModelConfig:
        """From the environment (and ``.env``), named as the service's settings name them."""
        return cls.from_settings(_ModelEnv())


class ModelSettings(Protocol):
    """The model fields of a settings object (the service's, or :class:`_ModelEnv`)."""

    @property
    def anthropic_api_key(self) -> SecretStr | None: ...
    @property
    def anthropic_base_url(self) -> str | None: ...
    @property
    def router_model(self) -> str: ...
    @property
    def planner_model(self) -> str: ...
    @property
    def job_code_model(self) -> str: ...
    @property
    def model_timeout_s(self) -> float: ...
    @property
    def model_max_retries(self) -> int: ...
    @property
    def model_max_wait_s(self) -> float: ...
    @property
    def provider(self) -> Provider: ...
    @property
    def cloud_region(self) -> str | None: ...
    @property
    def vertex_project_id(self) -> str | None: ...
    @property
    def vertex_access_token(self) -> SecretStr | None: ...
    @property
    def cloud_base_url(self) -> str | None: ...


def build_models(config: ModelConfig) -> dict[ModelRole, ChatModel]:
    """One model for every role: Claude when ``config`` has a key, else the offline model.

    Raises :class:`~agents.models.catalog.UnknownModelError` for a model id the API
    does not serve, so a wrong id stops start-up instead of failing the first turn.
    """
    if config.uses_anthropic:
        return dict.fromkeys(ROLES, claude_model(config))
    return offline_models()


def claude_model(config: ModelConfig) -> AnthropicModel:
    """Claude on ``config``'s provider with its ids (mapped to the provider's own), for
    every role; raises :class:`~agents.models.catalog.UnknownModelError` for an id the
    API does not serve. The service's models and the eval judge are both built here."""
    check_model_ids(config.model_ids)
    if config.provider == "anthropic":
        return AnthropicModel(
            models=config.model_ids,
            api_key=config.api_key,
            base_url=config.base_url,
            timeout=config.timeout_s,
            max_retries=config.max_retries,
            max_wait_s=config.max_wait_s,
        )
    return AnthropicModel(
        models=provider_ids(config.model_ids, config.provider),
        timeout=config.timeout_s,
        max_retries=config.max_retries,
        max_wait_s=config.max_wait_s,
        client=build_client(
            config.provider,
            config.cloud,
            timeout=config.timeout_s,
            max_retries=config.max_retries,
            max_wait_s=config.max_wait_s,
        ),
        owns_client=True,
    )


def token_counter(models: Mapping[ModelRole, ChatModel]) -> TokenCounter:
    """What counts the budgets: the Messages API's ``count_tokens`` when the planner is
    Claude, the local BPE tokenizer otherwise (``agents.tokens``)."""
    planner = models.get("planner")
    # Bedrock's client refuses count_tokens outright ("not supported in Bedrock yet"):
    # counting there would fail and fall back on every text, so count locally at once.
    if isinstance(planner, AnthropicModel) and not isinstance(
        planner.client, anthropic.AsyncAnthropicBedrock
    ):
        from agents.models.anthropic_count import ApiTokenCounter

        return ApiTokenCounter(planner)
    return local_token_counter()


def offline_models() -> dict[ModelRole, ChatModel]:
    """The offline model (no network, no key) for every role."""
    from agents.offline import OfflineModel

    return dict.fromkeys(ROLES, OfflineModel())


def _alias(name: str) -> AliasChoices:
    return AliasChoices(name, f"PLANWRIGHT_{name}")


class _ModelEnv(BaseSettings):
    """The model variables of the service's settings (same names, same defaults)."""

    model_config = SettingsConfigDict(
        env_prefix="PLANWRIGHT_", env_file=".env", extra="ignore", populate_by_name=True
    )

    anthropic_api_key: SecretStr | None = Field(None, validation_alias=_alias("ANTHROPIC_API_KEY"))
    anthropic_base_url: str | None = Field(None, validation_alias=_alias("ANTHROPIC_BASE_URL"))
    router_model: str = DEFAULT_MODEL_IDS["router"]
    planner_model: str = DEFAULT_MODEL_IDS["planner"]
    job_code_model: str = DEFAULT_MODEL_IDS["job_code"]
    model_timeout_s: float = 120.0
    model_max_retries: int = 3
    model_max_wait_s: float = 60.0
    provider: Provider = "anthropic"
    cloud_region: str | None = None
    vertex_project_id: str | None = None
    vertex_access_token: SecretStr | None = None
    cloud_base_url: str | None = None
