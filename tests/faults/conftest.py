"""Fixtures of the fault tier: a Redis and a Postgres of its own per module, the fake
Messages API and a cluster whose workers each test starts (helpers in tests/faults/helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.faults.helpers import SERVICE_DB, OwnPostgres, OwnRedis
from tests.integration.helpers import Cluster


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[OwnPostgres]:
    server = OwnPostgres()
    try:
        server.init().start()
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path_factory.mktemp("redis"))
    try:
        yield server.start()
    finally:
        server.kill()


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_fake(fake_api: FakeAnthropicServer) -> None:
    fake_api.reset()


@pytest.fixture(scope="module")
def fault_cluster(
    own_postgres: OwnPostgres,
    own_redis: OwnRedis,
    fake_api: FakeAnthropicServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Cluster]:
    """Workers are started by each test (``fault_cluster.start``) with the settings it
    needs; all are stopped at the module's end."""
    database_url = own_postgres.create_database(SERVICE_DB)
    client = own_redis.client()
    cluster = Cluster(
        database_url=database_url,
        redis_url=own_redis.url,
        redis_conn=client,
        fake=fake_api,
        log_dir=tmp_path_factory.mktemp("workers"),
    )
    try:
        yield cluster
    finally:
        if not own_redis.running:
            own_redis.start()
        own_postgres.allow(SERVICE_DB)
        try:
            cluster.close()
        finally:
            client.close()
