"""A strict fake Anthropic Messages API served over real HTTP, for tests.

The real ``anthropic`` SDK is pointed at it (``base_url=server.base_url`` or
``ANTHROPIC_BASE_URL``), so the whole client path -- request building, auth
headers, retries, timeouts, SSE decoding, the streaming helpers -- runs for
real against scripted replies::

    with FakeAnthropicServer() as server:
        server.queue(tool_reply(("add_jobs", {"jobs": [...]})), text_reply("Done."))
        client = anthropic.Anthropic(api_key="test-key", base_url=server.base_url)
        ...
        assert server.requests[0].tools[0]["name"] == "add_jobs"

It answers like the real API, not just in shape:

* every request is checked first (:mod:`tests.fakes.rules`): a body the API
  would reject gets its 400 ``invalid_request_error``, an unknown or retired
  model 404 ``not_found_error`` (:mod:`tests.fakes.models`), before any
  scripted reply is used -- a rejected request consumes none;
* prompt caching follows the API's accounting (:mod:`tests.fakes.cache`): hits
  only for an identical prefix at or over the model's minimum;
* a reply is cut to the request's ``max_tokens`` (:mod:`tests.fakes.encode`).

Wire formats follow ``anthropic==2.10.0``: ``POST /v1/messages`` answers a
``message`` object or, with ``"stream": true``, the SSE sequence
``message_start``, ``ping``, per block ``content_block_start`` /
``content_block_delta`` / ``content_block_stop``, then ``message_delta`` (stop
reason + cumulative usage) and ``message_stop``; ``POST
/v1/messages/count_tokens`` answers ``{"input_tokens": N}``; errors are
``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}``
with a ``request-id`` header on every response. The SDK sends ``api_key`` as
``Authorization: Bearer <key>``; the fake accepts that or ``x-api-key`` and
answers 401 ``authentication_error`` to neither.

Scripting problems (an empty queue, a reply callable that raised) answer 500
with ``x-should-retry: false`` and are listed in :attr:`FakeAnthropicServer.errors`;
requests the rules rejected are listed in :attr:`FakeAnthropicServer.rejected`.
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.fakes.cache import PromptCache, estimate_input_tokens
from tests.fakes.encode import (
    cut_to_budget,
    message_events,
    output_tokens,
    stream_error_events,
)
from tests.fakes.models import lookup
from tests.fakes.quick_server import QuickServer
from tests.fakes.recording import RecordedRequest
from tests.fakes.replies import (
    DEFAULT_MODEL_ECHO,
    ERROR_STATUS,
    DelayReply,
    ErrorReply,
    MessageReply,
    RawReply,
    Reply,
    ReplyFn,
    StreamErrorReply,
    Text,
    ToolUse,
    context_exceeded_reply,
    delay_reply,
    empty_reply,
    error_reply,
    malformed_tool_reply,
    overloaded_reply,
    rate_limit_reply,
    raw_reply,
    refusal_reply,
    stream_error_reply,
    text_reply,
    tool_reply,
    truncated_tool_reply,
)
from tests.fakes.rules import check_request

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
    "context_exceeded_reply",
    "delay_reply",
    "empty_reply",
    "error_reply",
    "estimate_input_tokens",
    "malformed_tool_reply",
    "overloaded_reply",
    "rate_limit_reply",
    "raw_reply",
    "refusal_reply",
    "stream_error_reply",
    "text_reply",
    "tool_reply",
    "truncated_tool_reply",
]

Blocks = list[tuple[Text | ToolUse, dict[str, Any]]]


class FakeAnthropicServer:
    """Runs a Starlette app under uvicorn in a background thread on 127.0.0.1:<free port>."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._count_tokens_requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._rejected: list[tuple[int, str, str]] = []
        self.cache = PromptCache()
        """The prompt cache every request of this server shares."""
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
        server = QuickServer(config)
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
            self._rejected.clear()
        self.cache.clear()
        with self._lock:
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

    def _check(
        self, recorded: RecordedRequest, request_id: str, *, count_tokens: bool = False
    ) -> JSONResponse | None:
        """The error the real API would answer ``recorded`` with, or ``None``."""
        if recorded.api_key is None:
            return self._error(
                request_id,
                401,
                "authentication_error",
                "fake server: missing credentials (x-api-key or Authorization: Bearer)",
            )
        body = recorded.json
        if count_tokens and isinstance(body, dict):
            # count_tokens takes the same body without max_tokens (and never streams).
            body = {"max_tokens": 1, **body}
        failed = check_request(body)
        if failed is None:
            return None
        with self._lock:
            self._rejected.append(failed)
        return self._error(request_id, *failed)

    @property
    def rejected(self) -> list[tuple[int, str, str]]:
        """``(status, error_type, message)`` of every request the rules refused."""
        with self._lock:
            return list(self._rejected)

    async def _handle_count_tokens(self, request: Request) -> Response:
        recorded = await self._record(request, self._count_tokens_requests)
        request_id = self._next_request_id()
        invalid = self._check(recorded, request_id, count_tokens=True)
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
        invalid = self._check(recorded, request_id)
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
                partial = (Text(reply.partial_text),) if reply.partial_text is not None else ()
                message = self._message(MessageReply(content=partial, stop_reason=None), body)
                blocks = self._blocks(MessageReply(content=partial))
                return self._sse(stream_error_events(reply, message, blocks), request_id, None, 0.0)
            status = ERROR_STATUS.get(reply.error_type, 500)
            return self._error(request_id, status, reply.error_type, reply.message)
        return self._message_reply(cut_to_budget(reply, body["max_tokens"]), body, request_id)

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
        model = lookup(body.get("model"))
        minimum = model.min_cache_tokens if model is not None else 0
        usage: dict[str, Any] = {
            **self.cache.account(body, minimum).as_usage(),
            "output_tokens": output_tokens(reply.content),
            "service_tier": "standard",
        }
        usage.update(reply.usage or {})
        return usage

    def _blocks(self, reply: MessageReply) -> Blocks:
        """Pair each scripted block with its wire JSON, minting tool ids."""
        out: Blocks = []
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

    def _message(self, reply: MessageReply, body: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "id": self._message_id(),
            "type": "message",
            "role": "assistant",
            "model": reply.model or body.get("model") or DEFAULT_MODEL_ECHO,
            "content": [],
            "stop_reason": reply.stop_reason,
            "stop_sequence": reply.stop_sequence,
            "usage": self._usage(reply, body),
        }

    def _message_reply(
        self, reply: MessageReply, body: Mapping[str, Any], request_id: str
    ) -> Response:
        message = self._message(reply, body)
        blocks = self._blocks(reply)
        if body.get("stream") is True:
            events = message_events(message, blocks, reply)
            return self._sse(events, request_id, reply.headers, reply.chunk_delay)
        message["content"] = [wire for _, wire in blocks]
        return JSONResponse(message, headers={"request-id": request_id, **(reply.headers or {})})

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
