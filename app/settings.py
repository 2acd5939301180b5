"""The one settings class. Values come from the environment (and an optional .env).

Standard variable names are used where an ecosystem already has one
(``ANTHROPIC_API_KEY``, ``DATABASE_URL``, ``REDIS_URL``); the rest take the
``PLANWRIGHT_`` prefix. Secrets are ``SecretStr`` so they never print.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from tools.yaml_io import DEFAULT_MAX_BYTES


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="PLANWRIGHT_", env_file=".env", extra="ignore", populate_by_name=True
    )

    environment: Literal["development", "test", "production"] = "development"
    host: str = "127.0.0.1"
    port: int = 8000

    anthropic_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("ANTHROPIC_API_KEY", "PLANWRIGHT_ANTHROPIC_API_KEY")
    )
    anthropic_base_url: str | None = Field(
        None, validation_alias=AliasChoices("ANTHROPIC_BASE_URL", "PLANWRIGHT_ANTHROPIC_BASE_URL")
    )
    router_model: str = "claude-haiku-4-5"
    planner_model: str = "claude-opus-4-5"
    job_code_model: str = "claude-sonnet-4-5"
    model_timeout_s: float = 120.0
    model_max_retries: int = 3
    max_tool_calls: int = 20

    max_yaml_bytes: int = DEFAULT_MAX_BYTES
    adaptor_docs_dir: Path | None = Field(
        None, description="Folder of locally installed adaptor packages (planwright adaptor-docs)."
    )

    @model_validator(mode="after")
    def _refuse_unsafe_defaults(self) -> Settings:
        if self.max_tool_calls < 1:
            raise ValueError("max_tool_calls must be at least 1")
        if self.max_yaml_bytes < 1024:
            raise ValueError("max_yaml_bytes must be at least 1024")
        return self

    @property
    def uses_anthropic(self) -> bool:
        return self.anthropic_api_key is not None and bool(
            self.anthropic_api_key.get_secret_value()
        )
