"""The service's models, built by the one factory from the service's settings."""

from __future__ import annotations

from collections.abc import Mapping

from agents.api import ChatModel, ModelConfig, ModelRole
from agents.api import build_models as build_from_config
from app.settings import Settings


def model_config(settings: Settings) -> ModelConfig:
    return ModelConfig.from_settings(settings)


def build_models(settings: Settings) -> Mapping[ModelRole, ChatModel]:
    """Claude with a key, the offline model without (see :mod:`agents.models.factory`)."""
    return build_from_config(model_config(settings))
