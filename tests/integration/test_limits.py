"""Oversized bodies and frames are refused before they are read, on a real server.

One real uvicorn worker (SQLite, the shared Redis), started exactly as the
integration workers are. A 200 MiB POST is streamed at it over a raw socket,
once with a ``Content-Length`` and once chunked; the worker's resident memory is
sampled from ``/proc`` all the while. A body under the limit without a valid
token gets 401 before it is read: with only the headers sent, and with fifty
such bodies at once. A WebSocket frame over the frame limit must be refused by
the protocol (close 1009).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.integration.helpers import DOC, EDITOR, REDIS_URL, WorkerProcess, worker_env

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads resident memory from /proc"
)

MIB = 1024 * 1024
POST_BYTES = 200 * MIB
CHUNK = MIB
MAX_GROWTH = 20 * MIB
UNDER_LIMIT = 4_000_000  # the default max_body_bytes is 4 MiB
ANSWER_WITHIN_S = 2.0


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    folder = tmp_path_factory.mktemp("limits")
    env = worker_env(
        database_url=f"sqlite:///{folder / 'planwright.db'}",
        redis_url=REDIS_URL,
        anthropic_base_url="http://127.0.0.1:9",  # never called
        extra={"PLANWRIGHT_CHECKPOINT_PATH": str(folder / "checkpoints.db")},
    )
    process = WorkerProcess("limits", env, folder).start()
    try:
        process.wait_ready()
        yield process
    finally:
        process.stop()


def _memory(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


class PeakRss:
    """Samples a process's resident set every 5 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.baseline = _memory(pid, "VmRSS")
        self.peak = self.baseline
        self.hwm_before = _memory(pid, "VmHWM")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _memory(self.pid, "VmRSS"))
            time.sleep(0.005)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _memory(self.pid, "VmRSS"))
        self.hwm_after = _memory(self.pid, "VmHWM")

    @property
    def growth(self) -> int:
        """The most the process grew meanwhile (sampled, and by its high-water mark)."""
        return max(self.peak - self.baseline, self.hwm_after - max(self.hwm_before, self.baseline))


def _head(port: int, framing: str, token: str | None) -> bytes:
    """The request head of a JSON POST to ``/v1/workflows``."""
    lines = [
        "POST /v1/workflows HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        framing,
        *([f"Authorization: Bearer {token}"] if token else []),
        "",
        "",
    ]
    return "\r\n".join(lines).encode()


def _read_answer(sock: socket.socket) -> bytes:
    answer = b""
    while b"\r\n\r\n" not in answer or len(answer) < _expected(answer):
        more = sock.recv(65536)
        if not more:
            break
        answer += more
    return answer


def _post(port: int, *, chunked: bool, token: str | None) -> tuple[int, bytes, int]:
    """Stream a 200 MiB JSON body at ``/v1/workflows`` until the server answers;
    returns the status, the response body and how many bytes were sent."""
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {POST_BYTES}"
    filler = b'{"yaml": "' + b"x" * (CHUNK - 10)
    sent = 0
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(_head(port, framing, token))
        while sent < POST_BYTES:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            piece = filler[: min(CHUNK, POST_BYTES - sent)]
            data = f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece
            try:
                sock.sendall(data)
            except OSError:  # the server answered and closed: read what it said
                break
            sent += len(piece)
        sock.settimeout(10)
        with contextlib.suppress(OSError):
            answer = _read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 "), f"no HTTP answer after {sent} bytes: {answer[:200]!r}"
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1], sent


def _expected(answer: bytes) -> int:
    head, _, _ = answer.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(head) + 4 + int(value)
    return len(answer) + 1


@pytest.mark.parametrize(
    ("chunked", "token"),
    [(False, None), (False, EDITOR), (True, EDITOR)],
    # Without a token a declared length over the limit still gets 413 (the limit is
    # outermost); a chunked body without one gets 401 before it is read (below), so
    # the count as it streams in is exercised with a token.
    ids=["content-length", "content-length-token", "chunked-token"],
)
def test_a_200_mib_post_is_refused_with_413_before_it_is_read(
    worker: WorkerProcess, chunked: bool, token: str | None
) -> None:
    with httpx.Client(base_url=worker.base_url) as http:  # warm the code paths first
        assert http.post("/v1/workflows", json={"yaml": DOC}).status_code == 401
    with PeakRss(worker.pid) as memory:
        status, body, sent = _post(worker.port, chunked=chunked, token=token)
    assert status == 413, body
    assert json.loads(body)["error"]["code"] == "body_too_large"
    assert memory.growth < MAX_GROWTH, (
        f"the worker grew by {memory.growth / MIB:.1f} MiB on a {sent / MIB:.0f} MiB upload"
    )
    assert worker.running
    with httpx.Client(base_url=worker.base_url) as http:  # and it still serves
        assert http.get("/healthz").status_code == 200


def _answer_to_the_head(port: int, framing: str, token: str | None) -> tuple[bytes, float]:
    """Send only the head of a POST whose body never follows; the answer and how
    long it took (the socket times out after twice ``ANSWER_WITHIN_S``)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(_head(port, framing, token))
        started = time.monotonic()
        sock.settimeout(2 * ANSWER_WITHIN_S)
        try:
            answer = _read_answer(sock)
        except TimeoutError:
            answer = b""
        return answer, time.monotonic() - started


def _split(answer: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split(" ", 2)[1]), headers, body


@pytest.mark.parametrize(
    "framing",
    [f"Content-Length: {UNDER_LIMIT}", "Transfer-Encoding: chunked"],
    ids=["content-length", "chunked"],
)
@pytest.mark.parametrize("token", [None, "not-a-token"], ids=["no-token", "wrong-token"])
def test_a_body_without_a_valid_token_gets_401_before_it_is_sent(
    worker: WorkerProcess, framing: str, token: str | None
) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=worker.base_url, headers=headers) as http:
        # The dependency's 401 (a GET has no body): the early one must be the same.
        expected = http.get("/v1/workflows")
    assert expected.status_code == 401
    answer, took = _answer_to_the_head(worker.port, framing, token)
    assert answer, f"no answer within {took:.1f} s: the worker waits for the body"
    status, headers, body = _split(answer)
    assert status == 401, answer
    assert took < ANSWER_WITHIN_S
    assert json.loads(body) == expected.json()
    assert json.loads(body)["error"]["code"] == "unauthorized"
    assert headers["www-authenticate"] == expected.headers["www-authenticate"] == "Bearer"
    assert headers["content-type"] == expected.headers["content-type"]
    assert worker.running


def test_fifty_bodies_without_a_token_leave_the_worker_small(worker: WorkerProcess) -> None:
    body = b'{"yaml": "' + b"a" * (UNDER_LIMIT - 12) + b'"}'
    count = 50

    async def flood() -> list[int]:
        limits = httpx.Limits(max_connections=count)
        async with httpx.AsyncClient(base_url=worker.base_url, timeout=60, limits=limits) as http:
            headers = {"content-type": "application/json"}
            answers = await asyncio.gather(
                *(http.post("/v1/workflows", content=body, headers=headers) for _ in range(count))
            )
        return [answer.status_code for answer in answers]

    with httpx.Client(base_url=worker.base_url) as http:  # warm the code paths first
        assert http.post("/v1/workflows", json={"yaml": DOC}).status_code == 401
    with PeakRss(worker.pid) as memory:
        statuses = asyncio.run(flood())
    assert statuses == [401] * count
    assert memory.growth < MAX_GROWTH, (
        f"the worker grew by {memory.growth / MIB:.1f} MiB on {count} bodies of {len(body)} bytes"
    )


def test_a_body_under_the_limit_is_still_read(worker: WorkerProcess) -> None:
    headers = {"Authorization": f"Bearer {EDITOR}"}
    with httpx.Client(base_url=worker.base_url, headers=headers) as http:
        created = http.post("/v1/workflows", json={"yaml": DOC})
    assert created.status_code == 201, created.text


async def test_an_oversized_frame_is_closed_by_the_protocol_with_1009(
    worker: WorkerProcess,
) -> None:
    headers = {"Authorization": f"Bearer {EDITOR}"}
    async with httpx.AsyncClient(base_url=worker.base_url, headers=headers) as http:
        workflow = (await http.post("/v1/workflows", json={"yaml": DOC})).json()
        body = {"workflow_id": workflow["id"], "read_only": False}
        session = (await http.post("/v1/sessions", json=body)).json()
    url = worker.ws_url(f"/v1/sessions/{session['id']}/ws")
    async with connect(url, open_timeout=10, max_size=None) as ws:
        await ws.send("x" * (2 * 65536))  # small enough to be sent whole before the close
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd is not None, "the server sent no close frame"
    assert closed.value.rcvd.code == 1009
