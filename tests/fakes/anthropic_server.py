"""A fake Anthropic Messages API served over real HTTP, for tests.

The real ``anthropic`` SDK is pointed at it (``base_url=server.base_url`` or
``ANTHROPIC_BASE_URL``), so the whole client path -- request building, auth
headers, retries, timeouts, SSE decoding, the streaming helpers -- runs for
real against scripted replies::

    with FakeAnthropicServer() as server:
        server.queue(tool_reply(("add_jobs", {"jobs": [...]})), text_reply("Done."))
        client = anthropic.Anthropic(api_key="test-key", base_url=server.base_url)
        ...
        assert server.requests[0].tools[0]["name"] == "add_jobs"

Wire formats follow ``anthropic==2.10.0`` (see ``anthropic/types`` and
``anthropic/lib/streaming/_messages.py``):

* ``POST /v1/messages`` -> a ``message`` object, or with ``"stream": true`` the
  SSE sequence ``message_start``, ``ping``, per block ``content_block_start`` /
  ``content_block_delta`` (``text_delta`` | ``input_json_delta``) /
  ``content_block_stop``, then ``message_delta`` (stop reason + cumulative
  usage) and ``message_stop``.
* ``POST /v1/messages/count_tokens`` -> ``{"input_tokens": N}``.
* Errors -> ``{"type": "error", "error": {"type": ..., "message": ...},
  "request_id": ...}`` with a ``request-id`` header on every response.

The SDK 2.10.0 sends ``api_key`` as ``Authorization: Bearer <key>`` (not
``x-api-key``); the fake accepts either and answers 401 ``authentication_error``
when neither is present.

Token counts are a deterministic estimate (JSON characters / 4), not a real
tokenizer. Prompt caching is simulated: when the system prompt, a tool or the
top-level ``cache_control`` carries ``cache_control``, the tools + system prefix
is "written" on the first request (``cache_creation_input_tokens``) and "read"
on later requests with the same model, tools and system
(``cache_read_input_tokens``). There is no minimum cacheable length and no TTL
expiry.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import re
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeAlias

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = [
    "DelayReply",
    "ErrorReply",
    "FakeAnthropicServer",
    "MessageReply",
    "RawReply",
    "RecordedRequest",
    "Reply",
    "ReplyFn",
    "StreamErrorReply",
    "Text",
    "ToolUse",
    "delay_reply",
    "error_reply",
    "estimate_input_tokens",
    "malformed_tool_reply",
    "overloaded_reply",
    "rate_limit_reply",
    "raw_reply",
    "stream_error_reply",
    "text_reply",
    "tool_reply",
]

# HTTP status the real API uses for each error type.
ERROR_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

DEFAULT_MODEL_ECHO = "claude-fake"


# --------------------------------------------------------------------------- #
# Replies
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Text:
    """A text content block in a scripted reply."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A tool_use content block in a scripted reply.

    ``id`` is minted by the server (``toolu_fake_0001``, ...) when left ``None``.
    ``raw_json``, when set, is streamed verbatim as the ``input_json_delta``
    chunks instead of ``json.dumps(input)`` (used for malformed input).
    """

    name: str
    input: object = field(default_factory=dict)
    id: str | None = None
    raw_json: str | None = None


@dataclass(frozen=True)
class MessageReply:
    """A successful ``message`` response (streamed when the request asks for it)."""

    content: tuple[Text | ToolUse, ...]
    stop_reason: str | None = "end_turn"
    stop_sequence: str | None = None
    usage: Mapping[str, Any] | None = None
    """Overrides merged over the computed usage (e.g. ``{"output_tokens": 7}``)."""
    model: str | None = None
    """Model echoed in the response; defaults to the request's ``model``."""
    headers: Mapping[str, str] | None = None
    chunk_delay: float = 0.0
    """Seconds to sleep between SSE events when streaming."""


@dataclass(frozen=True)
class ErrorReply:
    """An API error response: ``{"type": "error", "error": {...}}``."""

    status: int
    error_type: str
    message: str = "fake server error"
    retry_after: float | None = None
    """Seconds; sent as ``retry-after-ms`` (which the SDK prefers) and ``retry-after``."""
    headers: Mapping[str, str] | None = None
    should_retry: bool | None = None
    """Sends ``x-should-retry: true|false``, which the SDK obeys over its status policy."""


@dataclass(frozen=True)
class DelayReply:
    """Sleep ``seconds`` before answering with ``then`` (to trigger client timeouts)."""

    seconds: float
    then: Reply


@dataclass(frozen=True)
class StreamErrorReply:
    """An ``event: error`` in the middle of an SSE stream (HTTP status already 200).

    For a non-streaming request it answers as a plain error response with the
    status that matches ``error_type``.
    """

    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    partial_text: str | None = None
    """Text streamed as a block before the error, if any."""


@dataclass(frozen=True)
class RawReply:
    """Any status/body/headers, verbatim (escape hatch for odd server behaviour)."""

    status: int
    body: bytes | str | Mapping[str, Any] | list[Any]
    headers: Mapping[str, str] | None = None


ReplyFn: TypeAlias = Callable[[dict[str, Any]], "Reply"]
Reply: TypeAlias = "MessageReply | ErrorReply | DelayReply | StreamErrorReply | RawReply | ReplyFn"


def text_reply(
    text: str,
    *,
    usage: Mapping[str, Any] | None = None,
    stop_reason: str = "end_turn",
    model: str | None = None,
    chunk_delay: float = 0.0,
) -> MessageReply:
    """A plain text answer. Streamed as one ``text_delta`` per word."""
    return MessageReply(
        content=(Text(text),),
        stop_reason=stop_reason,
        usage=usage,
        model=model,
        chunk_delay=chunk_delay,
    )


def tool_reply(
    *tool_uses: tuple[str, Mapping[str, Any]] | ToolUse,
    text: str | None = None,
    usage: Mapping[str, Any] | None = None,
    stop_reason: str = "tool_use",
    chunk_delay: float = 0.0,
) -> MessageReply:
    """One or more tool calls (optionally after a leading text block)."""
    if not tool_uses:
        raise ValueError("tool_reply needs at least one tool use")
    blocks: list[Text | ToolUse] = [Text(text)] if text is not None else []
    for item in tool_uses:
        if isinstance(item, ToolUse):
            blocks.append(item)
        else:
            name, args = item
            blocks.append(ToolUse(name=name, input=dict(args)))
    return MessageReply(
        content=tuple(blocks), stop_reason=stop_reason, usage=usage, chunk_delay=chunk_delay
    )


def malformed_tool_reply(
    name: str, raw_partial_json: str, *, text: str | None = None
) -> MessageReply:
    """A tool call whose input is not a JSON object.

    Streaming: the ``input_json_delta`` chunks concatenate to ``raw_partial_json``
    verbatim. Make it *syntactically* invalid (e.g. ``'{"keys": [}'``): the SDK
    parses the buffer with ``jiter`` in partial mode, so merely truncated JSON
    (``'{"keys": ["a"'``) is accepted as ``{"keys": ["a"]}``.

    Non-streaming: ``input`` is the string ``raw_partial_json`` instead of an object.
    """
    blocks: list[Text | ToolUse] = [Text(text)] if text is not None else []
    blocks.append(ToolUse(name=name, input=raw_partial_json, raw_json=raw_partial_json))
    return MessageReply(content=tuple(blocks), stop_reason="tool_use")


def error_reply(
    status: int,
    error_type: str,
    message: str = "fake server error",
    retry_after: float | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    should_retry: bool | None = None,
) -> ErrorReply:
    """An error response, e.g. ``error_reply(529, "overloaded_error", retry_after=0.01)``.

    Without ``retry_after`` the SDK falls back to exponential backoff
    (0.5 s * 2**n, jitter 0.75-1.0) between retries, which makes tests slow.
    """
    return ErrorReply(
        status=status,
        error_type=error_type,
        message=message,
        retry_after=retry_after,
        headers=headers,
        should_retry=should_retry,
    )


def rate_limit_reply(retry_after: float | None = 0.01, message: str = "Rate limited") -> ErrorReply:
    """429 ``rate_limit_error``."""
    return error_reply(429, "rate_limit_error", message, retry_after)


def overloaded_reply(retry_after: float | None = 0.01, message: str = "Overloaded") -> ErrorReply:
    """529 ``overloaded_error``."""
    return error_reply(529, "overloaded_error", message, retry_after)


def delay_reply(seconds: float, then: Reply) -> DelayReply:
    """Answer with ``then`` after ``seconds`` (the wait ends early if the server stops)."""
    return DelayReply(seconds=seconds, then=then)


def stream_error_reply(
    error_type: str = "overloaded_error",
    message: str = "Overloaded",
    *,
    partial_text: str | None = None,
) -> StreamErrorReply:
    """A stream that starts (HTTP 200) and then fails with an SSE ``error`` event."""
    return StreamErrorReply(error_type=error_type, message=message, partial_text=partial_text)


def raw_reply(
    status: int,
    body: bytes | str | Mapping[str, Any] | list[Any],
    headers: Mapping[str, str] | None = None,
) -> RawReply:
    """Any status and body, verbatim (dicts/lists are JSON-encoded)."""
    return RawReply(status=status, body=body, headers=headers)


# --------------------------------------------------------------------------- #
# Recording
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake received (recorded before validation)."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    """Lower-case header names."""
    json: Any
    """The decoded JSON body, or ``None`` if it did not parse."""
    raw_body: bytes
    timestamp: float

    def _field(self, name: str) -> Any:
        return self.json.get(name) if isinstance(self.json, dict) else None

    @property
    def model(self) -> Any:
        return self._field("model")

    @property
    def max_tokens(self) -> Any:
        return self._field("max_tokens")

    @property
    def system(self) -> Any:
        return self._field("system")

    @property
    def messages(self) -> Any:
        return self._field("messages")

    @property
    def tools(self) -> Any:
        return self._field("tools")

    @property
    def tool_choice(self) -> Any:
        return self._field("tool_choice")

    @property
    def stream(self) -> bool:
        return self._field("stream") is True

    @property
    def anthropic_version(self) -> str | None:
        return self.headers.get("anthropic-version")

    @property
    def anthropic_beta(self) -> list[str]:
        """The ``anthropic-beta`` header split on commas (empty if absent)."""
        raw = self.headers.get("anthropic-beta", "")
        return [part.strip() for part in raw.split(",") if part.strip()]

    @property
    def api_key(self) -> str | None:
        """The credential sent, from ``x-api-key`` or ``Authorization: Bearer``."""
        if key := self.headers.get("x-api-key"):
            return key
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[len("bearer ") :].strip() or None
        return None

    @property
    def retry_count(self) -> int | None:
        """The SDK's ``x-stainless-retry-count`` header (0 on the first attempt)."""
        raw = self.headers.get("x-stainless-retry-count")
        return int(raw) if raw is not None and raw.isdigit() else None


# --------------------------------------------------------------------------- #
# Token estimates and cache simulation
# --------------------------------------------------------------------------- #


def _canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _tokens(obj: object) -> int:
    if obj is None or obj == "" or obj == [] or obj == {}:
        return 0
    text = obj if isinstance(obj, str) else _canonical(obj)
    return max(1, math.ceil(len(text) / 4))


def estimate_input_tokens(body: Mapping[str, Any]) -> int:
    """Deterministic input-token estimate: characters of system + tools + messages / 4."""
    return _tokens(body.get("system")) + _tokens(body.get("tools")) + _tokens(body.get("messages"))


def _cache_controls(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    top = body.get("cache_control")
    if isinstance(top, Mapping):
        found.append(top)
    system = body.get("system")
    if isinstance(system, list):
        found.extend(
            b["cache_control"]
            for b in system
            if isinstance(b, Mapping) and isinstance(b.get("cache_control"), Mapping)
        )
    tools = body.get("tools")
    if isinstance(tools, list):
        found.extend(
            t["cache_control"]
            for t in tools
            if isinstance(t, Mapping) and isinstance(t.get("cache_control"), Mapping)
        )
    return found


def _output_tokens(content: tuple[Text | ToolUse, ...]) -> int:
    total = 0
    for block in content:
        if isinstance(block, Text):
            total += len(block.text)
        else:
            total += len(block.name) + len(_tool_json(block))
    return max(1, math.ceil(total / 4))


def _tool_json(block: ToolUse) -> str:
    if block.raw_json is not None:
        return block.raw_json
    return json.dumps(block.input, ensure_ascii=False)


def _split_words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def _split_json(text: str) -> list[str]:
    if not text:
        return []
    size = max(1, min(12, math.ceil(len(text) / 2)))
    return [text[i : i + size] for i in range(0, len(text), size)]


# --------------------------------------------------------------------------- #
# Server
# --------------------------------------------------------------------------- #


class _QuickServer(uvicorn.Server):
    """uvicorn with a 10 ms exit poll and a shutdown without fixed sleeps.

    Stock uvicorn polls ``should_exit`` every 100 ms and sleeps another 100 ms
    on shutdown, which adds ~0.2 s to every test using a function-scoped fake.
    This relies on uvicorn internals (``servers``, ``server_state``), pinned in
    pyproject.toml.
    """

    async def main_loop(self) -> None:
        ticks = 0
        should_exit = await self.on_tick(0)
        while not should_exit:
            await asyncio.sleep(0.01)
            ticks += 1
            # on_tick refreshes the Date header when its counter is a multiple of 10
            should_exit = await self.on_tick(0 if ticks % 100 == 0 else 1)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()  # closes idle keep-alive connections at once
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(self.config.timeout_graceful_shutdown or 1)
        state = self.server_state
        while (state.connections or state.tasks) and not self.force_exit:
            if loop.time() >= deadline:
                break
            await asyncio.sleep(0.005)
        for task in list(state.tasks):
            task.cancel()
        for connection in list(state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.close()
        for server in self.servers:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), timeout=1.0)
        await self.lifespan.shutdown()


class FakeAnthropicServer:
    """Runs a Starlette app under uvicorn in a background thread on 127.0.0.1:<free port>."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._count_tokens_requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._cache_keys: set[str] = set()
        self._message_seq = 0
        self._tool_seq = 0
        self._request_seq = 0
        self.default_reply: Reply | None = None
        """Used when the queue is empty; ``None`` makes such a request fail loudly."""

        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._uvicorn: uvicorn.Server | None = None
        self._socket: socket.socket | None = None
        self._port: int | None = None
        self._app = Starlette(
            routes=[
                Route("/v1/messages", self._handle_messages, methods=["POST"]),
                Route("/v1/messages/count_tokens", self._handle_count_tokens, methods=["POST"]),
                Route(
                    "/{path:path}",
                    self._handle_unknown,
                    methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
                ),
            ]
        )

    # -- lifecycle ---------------------------------------------------------- #

    @property
    def base_url(self) -> str:
        if self._port is None:
            raise RuntimeError("FakeAnthropicServer is not running; call start() first")
        return f"http://127.0.0.1:{self._port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> FakeAnthropicServer:
        if self._thread is not None:
            raise RuntimeError("FakeAnthropicServer already started")
        # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose
        # proto is IPPROTO_TCP, and without it keep-alive requests stall ~40 ms (Nagle).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        sock.setblocking(False)
        self._socket = sock
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app,
            loop="asyncio",
            http="h11",
            ws="none",
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=1,
            timeout_keep_alive=5,
        )
        server = _QuickServer(config)
        self._uvicorn = server
        self._stopping.clear()
        self._thread = threading.Thread(
            target=server.run,
            kwargs={"sockets": [sock]},
            name=f"fake-anthropic-{self._port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + 5.0
        while not server.started:
            if not self._thread.is_alive():
                self._cleanup_socket()
                raise RuntimeError("fake Anthropic server thread died during startup")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("fake Anthropic server did not start within 5 s")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        thread, server = self._thread, self._uvicorn
        if thread is None or server is None:
            return
        self._stopping.set()
        server.should_exit = True
        thread.join(timeout=3.0)
        if thread.is_alive():
            server.force_exit = True
            thread.join(timeout=3.0)
        self._thread = None
        self._uvicorn = None
        self._cleanup_socket()

    def _cleanup_socket(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- scripting ---------------------------------------------------------- #

    def queue(self, *replies: Reply) -> None:
        """Append scripted replies, consumed in order, one per ``/v1/messages`` call."""
        with self._lock:
            self._queue.extend(replies)

    def reset(self) -> None:
        """Forget queued replies, recorded requests, errors, the prompt cache and id counters."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self._count_tokens_requests.clear()
            self._errors.clear()
            self._cache_keys.clear()
            self._message_seq = self._tool_seq = self._request_seq = 0
        self.default_reply = None

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every ``/v1/messages`` request received (a copy), in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def count_tokens_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._count_tokens_requests)

    @property
    def errors(self) -> list[str]:
        """Scripting problems the fake hit (empty queue, a reply callable raised, ...)."""
        with self._lock:
            return list(self._errors)

    @property
    def pending(self) -> int:
        """Scripted replies not yet consumed."""
        with self._lock:
            return len(self._queue)

    def assert_all_consumed(self) -> None:
        with self._lock:
            left = list(self._queue)
        if left:
            raise AssertionError(f"fake Anthropic server: {len(left)} scripted repl(ies) unused")

    # -- request handling --------------------------------------------------- #

    def _next_request_id(self) -> str:
        with self._lock:
            self._request_seq += 1
            return f"req_fake_{self._request_seq:04d}"

    async def _record(self, request: Request, log: list[RecordedRequest]) -> RecordedRequest:
        raw = await request.body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        recorded = RecordedRequest(
            method=request.method,
            path=request.url.path,
            query=request.url.query,
            headers={k.lower(): v for k, v in request.headers.items()},
            json=body,
            raw_body=raw,
            timestamp=time.time(),
        )
        with self._lock:
            log.append(recorded)
        return recorded

    def _error(
        self,
        request_id: str,
        status: int,
        error_type: str,
        message: str,
        headers: Mapping[str, str] | None = None,
    ) -> JSONResponse:
        return JSONResponse(
            {
                "type": "error",
                "error": {"type": error_type, "message": message},
                "request_id": request_id,
            },
            status_code=status,
            headers={"request-id": request_id, **(headers or {})},
        )

    def _loud_error(self, request_id: str, message: str) -> JSONResponse:
        with self._lock:
            self._errors.append(message)
        return self._error(request_id, 500, "api_error", message, {"x-should-retry": "false"})

    def _validate(
        self, recorded: RecordedRequest, request_id: str, required: tuple[str, ...]
    ) -> JSONResponse | None:
        if recorded.api_key is None:
            return self._error(
                request_id,
                401,
                "authentication_error",
                "fake server: missing credentials (x-api-key or Authorization: Bearer)",
            )
        body = recorded.json
        if not isinstance(body, dict):
            return self._error(
                request_id, 400, "invalid_request_error", "request body must be a JSON object"
            )
        for name in required:
            if name not in body:
                return self._error(
                    request_id, 400, "invalid_request_error", f"{name}: Field required"
                )
        if "max_tokens" in required and (
            not isinstance(body["max_tokens"], int)
            or isinstance(body["max_tokens"], bool)
            or body["max_tokens"] < 1
        ):
            return self._error(
                request_id,
                400,
                "invalid_request_error",
                "max_tokens: Input should be a positive integer",
            )
        if not isinstance(body["messages"], list):
            return self._error(
                request_id, 400, "invalid_request_error", "messages: Input should be a valid list"
            )
        return None

    async def _handle_count_tokens(self, request: Request) -> Response:
        recorded = await self._record(request, self._count_tokens_requests)
        request_id = self._next_request_id()
        invalid = self._validate(recorded, request_id, ("model", "messages"))
        if invalid is not None:
            return invalid
        return JSONResponse(
            {"input_tokens": estimate_input_tokens(recorded.json)},
            headers={"request-id": request_id},
        )

    async def _handle_unknown(self, request: Request) -> Response:
        return self._error(
            self._next_request_id(),
            404,
            "not_found_error",
            f"fake server: no route for {request.method} {request.url.path}",
        )

    async def _handle_messages(self, request: Request) -> Response:
        recorded = await self._record(request, self._requests)
        request_id = self._next_request_id()
        invalid = self._validate(recorded, request_id, ("model", "max_tokens", "messages"))
        if invalid is not None:
            return invalid
        body: dict[str, Any] = recorded.json

        with self._lock:
            reply: Reply | None = self._queue.popleft() if self._queue else self.default_reply
            position = len(self._requests)
        if reply is None:
            return self._loud_error(
                request_id,
                f"fake server: no scripted reply for /v1/messages request #{position} "
                "(queue is empty and default_reply is None)",
            )
        return await self._respond(reply, body, request_id)

    async def _respond(self, reply: Reply, body: dict[str, Any], request_id: str) -> Response:
        while True:
            if isinstance(reply, DelayReply):
                await self._sleep(reply.seconds)
                reply = reply.then
            elif isinstance(reply, MessageReply | ErrorReply | StreamErrorReply | RawReply):
                break
            elif callable(reply):
                try:
                    reply = reply(body)
                except Exception as exc:
                    return self._loud_error(
                        request_id, f"fake server: reply callable raised {exc!r}"
                    )
            else:
                return self._loud_error(request_id, f"fake server: not a reply: {reply!r}")

        if isinstance(reply, ErrorReply):
            return self._error_reply(reply, request_id)
        if isinstance(reply, RawReply):
            return self._raw_reply(reply, request_id)
        if isinstance(reply, StreamErrorReply):
            if body.get("stream") is True:
                return self._sse(self._stream_error_events(reply, body), request_id, None, 0.0)
            status = ERROR_STATUS.get(reply.error_type, 500)
            return self._error(request_id, status, reply.error_type, reply.message)
        return self._message_reply(reply, body, request_id)

    async def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self._stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(left, 0.05))

    def _error_reply(self, reply: ErrorReply, request_id: str) -> JSONResponse:
        headers: dict[str, str] = {}
        if reply.retry_after is not None:
            headers["retry-after-ms"] = f"{reply.retry_after * 1000:g}"
            headers["retry-after"] = str(max(0, math.ceil(reply.retry_after)))
        if reply.should_retry is not None:
            headers["x-should-retry"] = "true" if reply.should_retry else "false"
        headers.update(reply.headers or {})
        return self._error(request_id, reply.status, reply.error_type, reply.message, headers)

    def _raw_reply(self, reply: RawReply, request_id: str) -> Response:
        headers = {"request-id": request_id, **(reply.headers or {})}
        if isinstance(reply.body, Mapping | list):
            return JSONResponse(reply.body, status_code=reply.status, headers=headers)
        return Response(reply.body, status_code=reply.status, headers=headers)

    # -- messages ----------------------------------------------------------- #

    def _usage(self, reply: MessageReply, body: Mapping[str, Any]) -> dict[str, Any]:
        total = estimate_input_tokens(body)
        usage: dict[str, Any] = {
            "input_tokens": total,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": _output_tokens(reply.content),
        }
        controls = _cache_controls(body)
        if controls:
            prefix = _tokens(body.get("tools")) + _tokens(body.get("system"))
            key = hashlib.sha256(
                _canonical(
                    {
                        "model": body.get("model"),
                        "tools": body.get("tools"),
                        "system": body.get("system"),
                    }
                ).encode()
            ).hexdigest()
            with self._lock:
                hit = key in self._cache_keys
                self._cache_keys.add(key)
            usage["input_tokens"] = total - prefix
            if hit:
                usage["cache_read_input_tokens"] = prefix
            else:
                usage["cache_creation_input_tokens"] = prefix
                one_hour = any(c.get("ttl") == "1h" for c in controls)
                usage["cache_creation"] = {
                    "ephemeral_5m_input_tokens": 0 if one_hour else prefix,
                    "ephemeral_1h_input_tokens": prefix if one_hour else 0,
                }
        usage.update(reply.usage or {})
        return usage

    def _blocks(self, reply: MessageReply) -> list[tuple[Text | ToolUse, dict[str, Any]]]:
        """Pair each scripted block with its wire JSON, minting tool ids."""
        out: list[tuple[Text | ToolUse, dict[str, Any]]] = []
        for block in reply.content:
            if isinstance(block, Text):
                out.append((block, {"type": "text", "text": block.text}))
                continue
            tool_id = block.id
            if tool_id is None:
                with self._lock:
                    self._tool_seq += 1
                    tool_id = f"toolu_fake_{self._tool_seq:04d}"
            wire = {"type": "tool_use", "id": tool_id, "name": block.name, "input": block.input}
            out.append((block, wire))
        return out

    def _message_id(self) -> str:
        with self._lock:
            self._message_seq += 1
            return f"msg_fake_{self._message_seq:04d}"

    def _message_reply(
        self, reply: MessageReply, body: Mapping[str, Any], request_id: str
    ) -> Response:
        message: dict[str, Any] = {
            "id": self._message_id(),
            "type": "message",
            "role": "assistant",
            "model": reply.model or body.get("model") or DEFAULT_MODEL_ECHO,
            "content": [],
            "stop_reason": reply.stop_reason,
            "stop_sequence": reply.stop_sequence,
            "usage": self._usage(reply, body),
        }
        blocks = self._blocks(reply)
        if body.get("stream") is True:
            events = self._message_events(message, blocks, reply)
            return self._sse(events, request_id, reply.headers, reply.chunk_delay)
        message["content"] = [wire for _, wire in blocks]
        return JSONResponse(message, headers={"request-id": request_id, **(reply.headers or {})})

    def _message_events(
        self,
        message: dict[str, Any],
        blocks: list[tuple[Text | ToolUse, dict[str, Any]]],
        reply: MessageReply,
    ) -> list[tuple[str, dict[str, Any]]]:
        usage = message["usage"]
        start_usage = {**usage, "output_tokens": min(1, usage.get("output_tokens", 1))}
        start = {**message, "stop_reason": None, "stop_sequence": None, "usage": start_usage}
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            ("ping", {"type": "ping"}),
        ]
        for index, (block, wire) in enumerate(blocks):
            first: dict[str, Any]
            if isinstance(block, Text):
                first = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": w} for w in _split_words(block.text)]
            else:
                first = {**wire, "input": {}}
                chunks = ["", *_split_json(_tool_json(block))]
                deltas = [{"type": "input_json_delta", "partial_json": c} for c in chunks]
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": first},
                )
            )
            events.extend(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
                for d in deltas
            )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        delta_usage = {
            k: usage[k]
            for k in (
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
                "output_tokens",
            )
            if k in usage
        }
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": reply.stop_reason,
                        "stop_sequence": reply.stop_sequence,
                    },
                    "usage": delta_usage,
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return events

    def _stream_error_events(
        self, reply: StreamErrorReply, body: Mapping[str, Any]
    ) -> list[tuple[str, dict[str, Any]]]:
        partial = MessageReply(
            content=(Text(reply.partial_text),) if reply.partial_text is not None else (),
            stop_reason=None,
        )
        message: dict[str, Any] = {
            "id": self._message_id(),
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or DEFAULT_MODEL_ECHO,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self._usage(partial, body),
        }
        events = self._message_events(message, self._blocks(partial), partial)
        events = events[:-2]  # drop message_delta + message_stop
        if reply.partial_text is not None:
            events = events[:-1]  # the block never finishes
        events.append(
            (
                "error",
                {"type": "error", "error": {"type": reply.error_type, "message": reply.message}},
            )
        )
        return events

    def _sse(
        self,
        events: list[tuple[str, dict[str, Any]]],
        request_id: str,
        headers: Mapping[str, str] | None,
        chunk_delay: float,
    ) -> StreamingResponse:
        async def generate() -> AsyncIterator[bytes]:
            for name, data in events:
                yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                if chunk_delay > 0:
                    await self._sleep(chunk_delay)
                else:
                    await asyncio.sleep(0)

        return StreamingResponse(
            generate(),
            media_type="text/event-stream",
            headers={"request-id": request_id, "cache-control": "no-cache", **(headers or {})},
        )
