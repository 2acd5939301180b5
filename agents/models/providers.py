"""The SDK client for each provider of Claude: the Claude API, Amazon Bedrock, Vertex AI.

All three are the ``anthropic`` SDK's own clients (``AsyncAnthropic``,
``AsyncAnthropicBedrock``, ``AsyncAnthropicVertex``) speaking one Messages API,
so :class:`~agents.models.anthropic.AnthropicModel` runs unchanged on each: the
same requests, cache breakpoints, streaming and usage. What differs is only here:

* Bedrock signs each request with AWS SigV4 from the standard AWS credential chain
  (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN``,
  ``AWS_PROFILE``, an instance role) or sends ``AWS_BEARER_TOKEN_BEDROCK``, posts to
  ``/model/{id}/invoke`` (``invoke-with-response-stream`` for streams, AWS
  event-stream framing) and needs ``anthropic[bedrock]`` (boto3, botocore);
* Vertex sends a Google OAuth access token (given, or Google's application default
  credentials), posts to ``/projects/{p}/locations/{r}/publishers/anthropic/models/
  {id}:rawPredict`` (``:streamRawPredict``) and needs ``anthropic[vertex]``.

Model ids are mapped per provider (:func:`agents.models.catalog.provider_model_id`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anthropic
from pydantic import SecretStr

from agents.models.base import ModelError, ModelRole
from agents.models.catalog import Provider, provider_model_id
from agents.models.deadline import RetryWaitCap

__all__ = [
    "CloudSettings",
    "ProviderUnavailableError",
    "SDKClient",
    "build_client",
    "platform_options",
    "provider_ids",
]

SDKClient = (
    anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock | anthropic.AsyncAnthropicVertex
)
"""The SDK's clients for the Claude API, Amazon Bedrock and Vertex AI: one Messages API."""

# The body's ``anthropic_version`` each platform documents. The SDK would send its own
# API version (2026-10-21), which Bedrock's ARN-versioned model ids refuse.
_PLATFORM_VERSIONS: tuple[tuple[type[Any], str], ...] = (
    (anthropic.AsyncAnthropicBedrock, "bedrock-2023-05-31"),
    (anthropic.AsyncAnthropicVertex, "vertex-2023-10-16"),
)


def platform_options(client: SDKClient) -> dict[str, Any]:
    """Extra request options for Bedrock and Vertex (none on the Claude API)."""
    for kind, version in _PLATFORM_VERSIONS:
        if isinstance(client, kind):
            return {"extra_body": {"anthropic_version": version}}
    return {}


_EXTRA: Mapping[Provider, tuple[str, str]] = {
    "bedrock": ("botocore", "anthropic[bedrock]"),
    "vertex": ("google.auth", "anthropic[vertex]"),
}


class ProviderUnavailableError(ModelError):
    """The provider's client cannot be built here (its extra is not installed)."""

    code = "provider_unavailable"


@dataclass(frozen=True)
class CloudSettings:
    """Where Bedrock or Vertex is reached; ``None`` leaves a value to the SDK's own
    environment handling (``AWS_REGION``, ``CLOUD_ML_REGION``, ``ANTHROPIC_VERTEX_PROJECT_ID``,
    ``ANTHROPIC_BEDROCK_BASE_URL``, ``ANTHROPIC_VERTEX_BASE_URL``)."""

    region: str | None = None
    """AWS region (Bedrock) or Google Cloud region (Vertex, e.g. ``global``, ``us-east5``)."""
    project_id: str | None = None
    """Google Cloud project (Vertex)."""
    access_token: SecretStr | None = None
    """A Google OAuth access token (Vertex); unset: application default credentials."""
    base_url: str | None = None
    """The provider's endpoint (tests point it at a local fake)."""


def provider_ids(ids: Mapping[ModelRole, str], provider: Provider) -> dict[ModelRole, str]:
    """Each role's Claude API id as ``provider`` names it."""
    return {role: provider_model_id(model_id, provider) for role, model_id in ids.items()}


def _require_extra(provider: Provider) -> None:
    module, extra = _EXTRA[provider]
    try:
        __import__(module)
    except ImportError:
        raise ProviderUnavailableError(
            f"PLANWRIGHT_PROVIDER={provider} needs the {extra} extra: "
            f"pip install 'planwright[{provider}]'",
            provider=provider,
        ) from None


def build_client(
    provider: Provider,
    cloud: CloudSettings,
    *,
    timeout: float,
    max_retries: int,
    max_wait_s: float | None,
) -> SDKClient:
    """The SDK client for ``provider`` (not the Claude API's: that one the model builds
    itself from its key)."""
    kwargs: dict[str, Any] = {"timeout": timeout, "max_retries": max_retries}
    if max_wait_s is not None:
        kwargs["middleware"] = [RetryWaitCap(max_wait_s)]
    if cloud.base_url is not None:
        kwargs["base_url"] = cloud.base_url
    if provider == "anthropic":
        raise ValueError("the Claude API client is built by AnthropicModel")
    _require_extra(provider)
    try:
        if provider == "bedrock":
            if cloud.region is not None:
                kwargs["aws_region"] = cloud.region
            return anthropic.AsyncAnthropicBedrock(**kwargs)
        if cloud.region is not None:
            kwargs["region"] = cloud.region
        if cloud.project_id is not None:
            kwargs["project_id"] = cloud.project_id
        if cloud.access_token is not None:
            kwargs["access_token"] = cloud.access_token.get_secret_value()
        return anthropic.AsyncAnthropicVertex(**kwargs)
    except ValueError as exc:  # no region anywhere: the SDK says which variable
        raise ModelError(f"cannot reach Claude on {provider}: {exc}", provider=provider) from exc
