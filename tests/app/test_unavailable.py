"""What counts as an outage of the database or Redis (app.unavailable), and nothing else."""

from __future__ import annotations

import psycopg
import pytest
import redis.exceptions
import sqlalchemy.exc

from app.http_errors import http_status
from app.unavailable import ServiceUnavailableError, unavailable


class _Orig(Exception):
    def __init__(self, sqlstate: str | None) -> None:
        super().__init__("driver error")
        self.sqlstate = sqlstate


def _dbapi(sqlstate: str | None, *, invalidated: bool = False, statement: str | None = "SELECT 1"):
    return sqlalchemy.exc.DBAPIError(
        statement, None, _Orig(sqlstate), connection_invalidated=invalidated
    )


@pytest.mark.parametrize(
    "error",
    [
        _dbapi("57P01"),  # terminated by pg_terminate_backend
        _dbapi("57014"),  # statement_timeout
        _dbapi("08006"),  # connection failure
        _dbapi(None, invalidated=True),
        _dbapi("55000", statement=None),  # refused while connecting
        sqlalchemy.exc.TimeoutError("QueuePool limit reached"),
        psycopg.OperationalError("the connection is closed"),
        redis.exceptions.TimeoutError("Timeout reading from socket"),
        redis.exceptions.ConnectionError("Connection refused"),
        ConnectionRefusedError(111, "refused"),
    ],
)
def test_outages_are_service_unavailable(error: Exception) -> None:
    down = unavailable(error)
    assert isinstance(down, ServiceUnavailableError)
    assert down.code == "service_unavailable" and http_status(down) == 503


def test_an_outage_behind_another_error_is_found() -> None:
    try:
        try:
            raise redis.exceptions.TimeoutError("slow")
        except redis.exceptions.TimeoutError as exc:
            raise RuntimeError("wrapped") from exc
    except RuntimeError as outer:
        assert unavailable(outer) is not None


@pytest.mark.parametrize(
    "error",
    [
        sqlalchemy.exc.IntegrityError("INSERT", None, _Orig("23505")),  # a bug, not an outage
        _dbapi("42P01"),  # undefined table
        ValueError("bad input"),
        KeyError("x"),
    ],
)
def test_other_errors_are_not_outages(error: Exception) -> None:
    assert unavailable(error) is None
