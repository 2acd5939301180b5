"""Langfuse fixtures: a stub HTTP API on loopback and clients wired to it."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic import SecretStr

from agents.tracing import LangfuseConfig
from tests.evals.helpers import SECRET_KEY
from tests.evals.langfuse_stub import LangfuseStub


@pytest.fixture
def langfuse_stub() -> Iterator[LangfuseStub]:
    with LangfuseStub() as stub:
        yield stub


@pytest.fixture
def langfuse_client(langfuse_stub: LangfuseStub) -> Iterator[Callable[..., Any]]:
    """Builds SDK clients pointed at the stub (own tracer provider, unique public key)."""
    made: list[Any] = []

    def make(**overrides: Any) -> Any:
        config = LangfuseConfig(
            public_key=f"pk-lf-test-{uuid.uuid4().hex[:12]}",
            secret_key=SecretStr(SECRET_KEY),
            host=langfuse_stub.base_url,
        )
        options: dict[str, Any] = {"tracer_provider": TracerProvider(), "flush_at": 1}
        options.update(overrides)
        client = config.client(**options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.shutdown()
