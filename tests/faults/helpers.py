"""The fault tier: workers over a Redis and a Postgres of the tier's own.

Each module gets its own ``redis-server`` (free loopback port, no persistence, the
``DEBUG`` command on) and its own throwaway Postgres cluster (``initdb`` into a
temporary folder, ``postgres`` on a free loopback port, ``fsync`` off), both
children of this process, so the tests can kill them, pause Redis with ``DEBUG
SLEEP``, terminate the service's database connections and refuse new ones, and
start them again, without touching the servers the other tiers share. The
uvicorn workers, clients and the fake Messages API are the integration tier's
(:mod:`tests.integration.helpers`).

Every wait has a deadline. Processes are stopped at teardown whatever the outcome
(and get a signal if this process dies first); the temporary folders are removed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis
from psycopg import sql

from tests.integration.helpers import free_port
from tests.waiting import wait_until

PG_BIN = Path(os.environ.get("PLANWRIGHT_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
SERVICE_DB = "planwright_faults"


def _as_postgres_user() -> dict[str, Any]:
    """``initdb`` and ``postgres`` refuse to run as root: as root, run them as the
    ``postgres`` account."""
    if os.geteuid() != 0:
        return {}
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        pytest.fail("running as root needs a 'postgres' account to run initdb", pytrace=False)
    return {"user": account.pw_uid, "group": account.pw_gid}


def _death_signal(sig: signal.Signals) -> Callable[[], None] | None:
    """A ``preexec_fn`` sending the child ``sig`` when this process dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def preexec() -> None:
        prctl(1, sig)  # PR_SET_PDEATHSIG

    return preexec


def _wait(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    wait_until(check, timeout=timeout_s, message=f"{what} not within {timeout_s} s")


def _stop(process: subprocess.Popen[bytes] | None, sig: signal.Signals) -> None:
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT_S)


class OwnRedis:
    """A ``redis-server`` on a fixed free port that can be paused, killed and restarted."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> OwnRedis:
        self.process = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self.folder)),
                *("--enable-debug-command", "yes"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_death_signal(signal.SIGKILL),
        )
        _wait(self.answers, START_TIMEOUT_S, f"redis-server on {self.port}")
        return self

    def client(self, timeout_s: float = 5.0) -> redis.Redis:
        return redis.Redis.from_url(
            self.url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s
        )

    def answers(self) -> bool:
        if self.process is None or self.process.poll() is not None:
            raise RuntimeError(f"redis-server on {self.port} exited")
        with contextlib.closing(self.client(0.5)) as client:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

    @contextlib.contextmanager
    def paused(self, seconds: float) -> Iterator[None]:
        """Redis hangs (``DEBUG SLEEP``) for ``seconds`` from entering the block; on
        leaving, wait until it answers again."""
        started = threading.Event()

        def sleep() -> None:
            with contextlib.closing(self.client(seconds + 10)) as client:
                started.set()
                client.execute_command("DEBUG", "SLEEP", seconds)

        thread = threading.Thread(target=sleep, daemon=True)
        thread.start()
        assert started.wait(5)
        # The DEBUG command is on its way; one PING that waits shows it took hold.
        time.sleep(0.1)
        try:
            yield
        finally:
            thread.join(seconds + 15)
            _wait(self.answers, seconds + 15, "Redis answering after DEBUG SLEEP")

    def kill(self) -> None:
        _stop(self.process, signal.SIGKILL)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


class OwnPostgres:
    """A throwaway Postgres cluster in a temporary folder, on a free loopback port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="planwright-faults-pg-"))
        self.data = self.folder / "data"
        self.log_path = self.folder / "postgres.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._as_user = _as_postgres_user()
        if self._as_user:
            os.chown(self.folder, self._as_user["user"], self._as_user["group"])

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def init(self) -> OwnPostgres:
        if not (PG_BIN / "initdb").exists():
            pytest.fail(f"the fault tier needs Postgres's initdb in {PG_BIN}", pytrace=False)
        subprocess.run(
            [
                str(PG_BIN / "initdb"),
                *("-D", str(self.data), "-U", "postgres", "--auth=trust"),
                *("-E", "UTF8", "--no-sync", "--locale=C"),
            ],
            check=True,
            capture_output=True,
            timeout=START_TIMEOUT_S * 2,
            **self._as_user,
        )
        return self

    def start(self) -> OwnPostgres:
        log = self.log_path.open("ab")
        try:
            self.process = subprocess.Popen(
                [
                    str(PG_BIN / "postgres"),
                    *("-D", str(self.data), "-p", str(self.port), "-k", str(self.folder)),
                    *("-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"),
                    *("-c", "synchronous_commit=off", "-c", "full_page_writes=off"),
                    *("-c", "max_connections=200"),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_death_signal(signal.SIGQUIT),
                **self._as_user,
            )
        finally:
            log.close()
        _wait(self.answers, START_TIMEOUT_S, f"Postgres on {self.port}")
        return self

    def answers(self) -> bool:
        if self.process is None or self.process.poll() is not None:
            raise RuntimeError(f"Postgres on {self.port} exited:\n{self.log_tail()}")
        try:
            with psycopg.connect(self.admin_url, connect_timeout=1):
                return True
        except psycopg.OperationalError:
            return False

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return "(no log)"

    def admin(self, statement: sql.Composed | sql.SQL, params: tuple[Any, ...] = ()) -> list[Any]:
        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(statement, params)
            return cursor.fetchall() if cursor.description else []

    def create_database(self, name: str) -> str:
        self.admin(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def cut_off(self, database: str) -> int:
        """Refuse new connections to ``database`` and terminate every open one; the
        number terminated."""
        self.allow(database, False)
        rows = self.admin(
            sql.SQL(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()"
            ),
            (database,),
        )
        return sum(1 for (ok,) in rows if ok)

    def allow(self, database: str, allowed: bool = True) -> None:
        self.admin(
            sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS {}").format(
                sql.Identifier(database), sql.Literal(allowed)
            )
        )

    def connections(self, database: str) -> int:
        rows = self.admin(
            sql.SQL("SELECT count(*) FROM pg_stat_activity WHERE datname = %s"), (database,)
        )
        return int(rows[0][0])

    def stop(self) -> None:
        _stop(self.process, signal.SIGQUIT)  # immediate shutdown: a throwaway cluster

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
