"""Model clients sharing one protocol shaped like the Anthropic Messages API."""

from agents.models.anthropic import AnthropicModel
from agents.models.base import (
    ChatModel,
    MalformedModelOutputError,
    ModelError,
    ModelRequest,
    ModelResponse,
    ModelRole,
    ModelTimeoutError,
    ModelUnavailableError,
    RequestContext,
    TextSink,
    Usage,
)
from agents.models.factory import ModelConfig, build_models, offline_models
from agents.models.scripted import ScriptedModel, ScriptExhaustedError, ScriptStep

__all__ = [
    "AnthropicModel",
    "ChatModel",
    "MalformedModelOutputError",
    "ModelConfig",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "ModelRole",
    "ModelTimeoutError",
    "ModelUnavailableError",
    "RequestContext",
    "ScriptExhaustedError",
    "ScriptStep",
    "ScriptedModel",
    "TextSink",
    "Usage",
    "build_models",
    "offline_models",
]
