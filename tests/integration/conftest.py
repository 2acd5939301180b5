"""Fixtures of the integration tier: a fresh database, the shared Redis, the fake Messages
API and two workers (the process and client helpers are in tests/integration/helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.integration.helpers import (
    REDIS_URL,
    Cluster,
    ServiceUnavailable,
    WorkerProcess,
    create_database,
    drop_database,
    redis_client,
)


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    """A fresh Postgres database for this module, dropped at its end."""
    try:
        url = create_database()
    except ServiceUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield url
    finally:
        drop_database(url)


@pytest.fixture(scope="module")
def shared_redis() -> Iterator[redis.Redis]:
    try:
        client = redis_client()
    except ServiceUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeAnthropicServer]:
    """One fake Messages API for the module's workers (reset before each test)."""
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_fake(fake_api: FakeAnthropicServer) -> None:
    fake_api.reset()


@pytest.fixture(scope="module")
def cluster(
    database_url: str,
    shared_redis: redis.Redis,
    fake_api: FakeAnthropicServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Cluster]:
    cluster = Cluster(
        database_url=database_url,
        redis_url=REDIS_URL,
        redis_conn=shared_redis,
        fake=fake_api,
        log_dir=tmp_path_factory.mktemp("workers"),
    )
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def workers(cluster: Cluster) -> tuple[WorkerProcess, WorkerProcess]:
    """Workers A and B, started together on the module's fresh database."""
    a, b = cluster.start("a", "b")
    return a, b
