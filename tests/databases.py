"""Database fixtures shared by every suite that runs on both SQLite and Postgres.

Postgres is not optional: when it cannot be reached the ``postgres`` cases fail
(CI starts it). ``PLANWRIGHT_TEST_POSTGRES_URL`` points at a server and a
maintenance database (default ``postgresql://postgres@127.0.0.1:5432/postgres``);
a fresh ``planwright_test_<random>`` database is created for the test session
and dropped at its end, and its ``public`` schema is emptied before each test.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy.engine import make_url

ADMIN_URL = os.environ.get(
    "PLANWRIGHT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
BACKENDS = ["sqlite", "postgres"]


def _with_database(url: str, database: str) -> str:
    return make_url(url).set(database=database).render_as_string(hide_password=False)


def _admin(url: str, *statements: str) -> None:
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        for statement in statements:
            conn.execute(statement)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh, empty Postgres database for this test session (dropped afterwards)."""
    name = f"planwright_test_{secrets.token_hex(6)}"
    try:
        _admin(ADMIN_URL, f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"Postgres is required for the store tests and is not reachable at {ADMIN_URL}: "
            f"{exc}. Start it, or set PLANWRIGHT_TEST_POSTGRES_URL.",
            pytrace=False,
        )
    try:
        yield _with_database(ADMIN_URL, name)
    finally:
        _admin(ADMIN_URL, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> str:
    """An empty database of each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{os.path.join(tmp_path, 'planwright.db')}"
    url: str = request.getfixturevalue("postgres_url")
    _admin(url, "DROP SCHEMA public CASCADE", "CREATE SCHEMA public")
    return url
