"""A loopback-only mock HTTP server for workflows run in ``@openfn/runtime``.

Every request is answered with JSON ``default`` (status 200). A path listed in
``fail`` (exact, or ending with it), or every path with ``fail_all``, answers
500: that is how a run forces an HTTP step to fail through the real adaptor. Every
request is recorded (method, path, parsed JSON body).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: Any
    authorization: str | None = None
    """The request's ``Authorization`` header (what a credential made of it)."""


@dataclass
class MockHttp:
    """Start with ``with MockHttp(...) as mock:``; ``mock.base_url`` is its address."""

    default: Any = field(default_factory=dict)
    fail: set[str] = field(default_factory=set)
    fail_all: bool = False
    requests: list[Request] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the mock server is not running")
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def answer(self, path: str) -> tuple[int, Any]:
        bare = path.split("?", 1)[0]
        if self.fail_all or any(bare == f or bare.endswith(f) for f in self.fail):
            return 500, {"error": f"mock failure for {bare}"}
        return 200, self.default

    def __enter__(self) -> MockHttp:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                auth = self.headers.get("Authorization")
                mock.requests.append(Request(self.command, self.path, body, auth))
                status, answer = mock.answer(self.path)
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

            def log_message(self, format: str, *args: Any) -> None:
                return  # quiet: requests are recorded on the mock instead

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server, self._thread = None, None
