"""Two real uvicorn worker processes sharing a real Redis and a real Postgres.

Redis and Postgres are not optional: when either is unreachable the tests
fail (CI starts both; see ``.ci/run``). ``PLANWRIGHT_TEST_POSTGRES_URL`` names
a server and its maintenance database (default
``postgresql://postgres@127.0.0.1:5432/postgres``), ``PLANWRIGHT_TEST_REDIS_URL``
the Redis (default ``redis://127.0.0.1:6379/0``).

Isolation: each test module gets a fresh ``planwright_it_<random>`` database,
dropped at the end. Redis may be shared with other runs, so nothing is
flushed: workflow ids are new uuids, and the bus keys of every workflow the
tests created (``planwright:wf:{id}:*``) are deleted at teardown.

Workers are ``python -m uvicorn app.main:create_app --factory`` on free
loopback ports, configured through the environment exactly as in production
(plus ``ANTHROPIC_BASE_URL`` pointing at the in-thread fake Messages API).
Their output goes to a log file quoted when one fails to start. They are
terminated (then killed) at teardown whatever the outcome, and on Linux they
also get SIGTERM if the test process itself dies.

The process and database helpers here are plain functions and classes so
``bench/ws_fanout.py`` can reuse them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any

import httpx
import psycopg
import redis
from psycopg import sql
from sqlalchemy.engine import make_url
from websockets.asyncio.client import ClientConnection, connect

from app.settings import Settings
from tests.documents import REFERRAL_DOC
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.waiting import wait_until_async

ROOT = Path(__file__).resolve().parents[2]
ADMIN_URL = os.environ.get(
    "PLANWRIGHT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("PLANWRIGHT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
BUS_PREFIX = "planwright"  # the service's Redis key prefix
EDITOR = "integration-editor-token-0123456789"
TOKENS = {EDITOR: "editor"}
START_TIMEOUT_S = 60.0
FRAME_TIMEOUT_S = 15.0
DEFAULT_MAX_FRAME_BYTES = Settings.model_fields["max_frame_bytes"].default

DOC = REFERRAL_DOC


# --------------------------------------------------------------------------- #
# Postgres and Redis
# --------------------------------------------------------------------------- #


class ServiceUnavailable(RuntimeError):
    """Redis or Postgres cannot be reached."""


def _admin(*statements: sql.Composed) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
        for statement in statements:
            conn.execute(statement)


def create_database(prefix: str = "planwright_it") -> str:
    """A new, empty database on the test server; returns its URL."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    try:
        _admin(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.OperationalError as exc:
        raise ServiceUnavailable(
            f"Postgres is required and is not reachable at {ADMIN_URL} ({exc}). "
            "Start it, or set PLANWRIGHT_TEST_POSTGRES_URL."
        ) from exc
    return make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)


def drop_database(url: str) -> None:
    name = make_url(url).database
    assert name, f"no database in {url!r}"
    _admin(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def redis_client(url: str = REDIS_URL) -> redis.Redis:
    """A client on the test Redis, checked to be reachable."""
    client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=10)
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        raise ServiceUnavailable(
            f"Redis is required and is not reachable at {url} ({exc}). "
            "Start it, or set PLANWRIGHT_TEST_REDIS_URL."
        ) from exc
    return client


def bus_key(workflow_id: str, kind: str) -> str:
    """A bus key of one workflow: ``events``, ``stream`` or ``lock``."""
    return f"{BUS_PREFIX}:wf:{workflow_id}:{kind}"


def delete_workflow_keys(client: redis.Redis, workflow_ids: Iterable[str]) -> int:
    """Delete the bus keys of these workflows only (the Redis may be shared)."""
    deleted = 0
    for workflow_id in workflow_ids:
        keys = list(client.scan_iter(match=bus_key(workflow_id, "*"), count=100))
        if keys:
            deleted += int(client.delete(*keys))
    return deleted


# --------------------------------------------------------------------------- #
# Worker processes
# --------------------------------------------------------------------------- #


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _parent_death_signal() -> Callable[[], None] | None:
    """On Linux, a ``preexec_fn`` making the child get SIGTERM when this process dies
    (so even a killed test run leaves no worker behind)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, signal.SIGTERM)

    return preexec


_PREEXEC = _parent_death_signal()


def worker_env(
    *,
    database_url: str,
    redis_url: str,
    anthropic_base_url: str,
    tokens: Mapping[str, str] = TOKENS,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of one worker: this process's, minus any Planwright or Anthropic
    settings it may carry, plus the shared services."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PLANWRIGHT_", "ANTHROPIC_"))
        and key not in ("DATABASE_URL", "REDIS_URL")
    }
    python_path = [str(ROOT), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    env.update(
        {
            "PYTHONPATH": os.pathsep.join(python_path),
            "PYTHONUNBUFFERED": "1",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": anthropic_base_url,
            "PLANWRIGHT_TOKENS": json.dumps(dict(tokens)),
            "PLANWRIGHT_ENVIRONMENT": "test",
            # No SDK retries: a failed model call shows up instead of consuming a
            # second scripted reply.
            "PLANWRIGHT_MODEL_MAX_RETRIES": "0",
            "PLANWRIGHT_MODEL_TIMEOUT_S": "60",
        }
    )
    env.update(extra or {})
    return env


class WorkerProcess:
    """One ``uvicorn app.main:create_app --factory`` process on a free loopback port."""

    def __init__(self, name: str, env: Mapping[str, str], log_dir: Path) -> None:
        self.name = name
        self.env = dict(env)
        self.port = free_port()
        self.log_path = log_dir / f"worker-{name}-{self.port}.log"
        self.cwd = log_dir  # no stray .env or SQLite files picked up from the repo
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_url(self, path: str, **query: object) -> str:
        params = {"token": EDITOR, **query}
        encoded = "&".join(f"{k}={v}" for k, v in params.items() if v is not None)
        return f"ws://127.0.0.1:{self.port}{path}?{encoded}"

    @property
    def pid(self) -> int:
        assert self.process is not None, f"worker {self.name} was never started"
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> WorkerProcess:
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "app.main:create_app",
                "--factory",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--lifespan",
                "on",
                "--no-access-log",
                "--timeout-graceful-shutdown",
                "5",
                # What `planwright serve` passes (app.limits.server_options): frames over
                # the limit are refused by the WebSocket protocol itself; no deflate.
                "--ws-per-message-deflate",
                self.env.get("PLANWRIGHT_WS_COMPRESSION", "false"),
                "--ws-max-size",
                self.env.get("PLANWRIGHT_MAX_FRAME_BYTES", str(DEFAULT_MAX_FRAME_BYTES)),
            ],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=_PREEXEC,  # only calls prctl: safe with threads running
        )
        return self

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Block until ``/healthz`` answers 200; raise with the log if the worker dies."""
        deadline = time.monotonic() + timeout_s
        with httpx.Client(timeout=2.0) as client:
            while True:
                if not self.running:
                    raise RuntimeError(
                        f"worker {self.name} exited with {self.process and self.process.poll()} "
                        f"while starting; log {self.log_path}:\n{self.log_tail()}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"{self.base_url}/healthz").status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"worker {self.name} not healthy after {timeout_s:.0f} s; "
                        f"log {self.log_path}:\n{self.log_tail()}"
                    )
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: the process gets no chance to clean up (release locks, close sockets)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited within 10 s. Idempotent."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None


class Cluster:
    """Workers sharing one database, one Redis and one fake Messages API. Remembers the
    workflows made through it so their Redis keys can be deleted afterwards."""

    def __init__(
        self,
        *,
        database_url: str,
        redis_url: str,
        redis_conn: redis.Redis,
        fake: FakeAnthropicServer,
        log_dir: Path,
    ) -> None:
        self.database_url = database_url
        self.redis_url = redis_url
        self.redis = redis_conn
        self.fake = fake
        self.log_dir = log_dir
        self.workers: list[WorkerProcess] = []
        self.workflow_ids: set[str] = set()

    def start(self, *names: str, **extra_env: str) -> list[WorkerProcess]:
        """Start workers together (as a deployment would) and wait until all are healthy."""
        env = worker_env(
            database_url=self.database_url,
            redis_url=self.redis_url,
            anthropic_base_url=self.fake.base_url,
            extra=extra_env,
        )
        started = [WorkerProcess(name, env, self.log_dir) for name in names]
        self.workers.extend(started)
        for worker in started:
            worker.start()
        for worker in started:
            worker.wait_ready()
        return started

    def close(self) -> None:
        try:
            for worker in self.workers:
                worker.stop()
        finally:
            delete_workflow_keys(self.redis, self.workflow_ids)


# --------------------------------------------------------------------------- #
# Clients
# --------------------------------------------------------------------------- #


class Rest:
    """The REST API of one worker, as the editor."""

    def __init__(self, worker: WorkerProcess, cluster: Cluster | None = None) -> None:
        self.worker = worker
        self.cluster = cluster
        self.http = httpx.AsyncClient(
            base_url=worker.base_url,
            headers={"Authorization": f"Bearer {EDITOR}"},
            timeout=FRAME_TIMEOUT_S,
        )

    async def __aenter__(self) -> Rest:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    async def _json(self, method: str, path: str, expect: int, **kwargs: Any) -> Any:
        response = await self.http.request(method, path, **kwargs)
        assert response.status_code == expect, (
            f"{method} {path} on worker {self.worker.name}: {response.status_code} {response.text}"
        )
        return response.json()

    async def create_workflow(self, yaml: str = DOC) -> dict[str, Any]:
        body: dict[str, Any] = await self._json("POST", "/v1/workflows", 201, json={"yaml": yaml})
        if self.cluster is not None:
            self.cluster.workflow_ids.add(body["id"])
        return body

    async def create_session(self, workflow_id: str) -> dict[str, Any]:
        body: dict[str, Any] = await self._json(
            "POST", "/v1/sessions", 201, json={"workflow_id": workflow_id, "read_only": False}
        )
        return body

    async def workflow(self, workflow_id: str) -> dict[str, Any]:
        body: dict[str, Any] = await self._json("GET", f"/v1/workflows/{workflow_id}", 200)
        return body

    async def version(self, workflow_id: str, version: int) -> dict[str, Any]:
        path = f"/v1/workflows/{workflow_id}/versions/{version}"
        body: dict[str, Any] = await self._json("GET", path, 200)
        return body

    async def versions(self, workflow_id: str) -> list[dict[str, Any]]:
        body: list[dict[str, Any]] = await self._json(
            "GET", f"/v1/workflows/{workflow_id}/versions", 200
        )
        return body

    async def put(self, workflow_id: str, yaml: str, expected_version: int) -> dict[str, Any]:
        body: dict[str, Any] = await self._json(
            "PUT",
            f"/v1/workflows/{workflow_id}",
            200,
            json={"yaml": yaml, "expected_version": expected_version},
        )
        return body


@contextlib.asynccontextmanager
async def chat(worker: WorkerProcess, session_id: str) -> AsyncIterator[ClientConnection]:
    async with connect(worker.ws_url(f"/v1/sessions/{session_id}/ws"), open_timeout=10) as ws:
        yield ws


@contextlib.asynccontextmanager
async def watch(
    worker: WorkerProcess, workflow_id: str, since_version: int | None = None
) -> AsyncIterator[ClientConnection]:
    url = worker.ws_url(f"/v1/workflows/{workflow_id}/watch", since_version=since_version)
    async with connect(url, open_timeout=10) as ws:
        yield ws


def turn(content: str) -> str:
    return json.dumps({"type": "turn", "content": content, "context": {"page": "workflow"}})


async def recv(ws: ClientConnection, timeout_s: float = FRAME_TIMEOUT_S) -> dict[str, Any]:
    try:
        raw = await asyncio.wait_for(ws.recv(), timeout_s)
    except TimeoutError:
        raise AssertionError(f"no frame within {timeout_s} s") from None
    frame: dict[str, Any] = json.loads(raw)
    return frame


async def recv_until(
    ws: ClientConnection, kind: str, timeout_s: float = FRAME_TIMEOUT_S, limit: int = 200
) -> list[dict[str, Any]]:
    """Frames up to and including the first of type ``kind``."""
    frames: list[dict[str, Any]] = []
    deadline = asyncio.get_running_loop().time() + timeout_s
    for _ in range(limit):
        left = deadline - asyncio.get_running_loop().time()
        try:
            frame = await recv(ws, max(left, 0.001))
        except AssertionError:
            raise AssertionError(f"no {kind!r} frame within {timeout_s} s; got {frames}") from None
        frames.append(frame)
        if frame["type"] == kind:
            return frames
    raise AssertionError(f"no {kind!r} frame in {limit} frames: {frames}")


async def assert_silent(ws: ClientConnection, within_s: float = 0.5) -> None:
    """Nothing more arrives for ``within_s``."""
    try:
        raw = await asyncio.wait_for(ws.recv(), within_s)
    except TimeoutError:
        return
    raise AssertionError(f"unexpected frame: {raw!r}")


async def eventually(
    check: Callable[[], bool], timeout_s: float = FRAME_TIMEOUT_S, what: str = "condition"
) -> None:
    await wait_until_async(check, timeout=timeout_s, message=f"waiting for {what}", interval=0.02)
