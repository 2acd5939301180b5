"""The real Planwright server for end-to-end tests: uvicorn on a free loopback
port in a background thread, SQLite in a temp folder, the offline model."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import httpx
import uvicorn
from fastapi import FastAPI

from app.api import web
from app.main import create_app
from app.services import Services
from app.settings import Settings

T = TypeVar("T")

EDITOR = "e2e-editor-token-0123456789"
REVIEWER = "e2e-reviewer-token-0123456789"
TOKENS = {EDITOR: "editor", REVIEWER: "reviewer"}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def e2e_settings(folder: Path, *, tokens: dict[str, str] | None) -> Settings:
    return Settings(
        environment="test",
        host="127.0.0.1",
        database_url=f"sqlite:///{folder / 'planwright.db'}",
        checkpoint_path=folder / "checkpoints.db",
        tokens=json.dumps(tokens) if tokens else None,
        redis_url=None,
        anthropic_api_key=None,
        anthropic_base_url=None,
    )


def with_web_page(app: FastAPI) -> FastAPI:
    """The app, serving the web page (a no-op once ``create_app`` includes it itself)."""
    if not any(getattr(route, "path", None) == "/" for route in app.routes):
        app.include_router(web.router)
    return app


class LiveServer:
    """``start()`` / ``stop()`` (and ``start()`` again on the same port and database)."""

    def __init__(self, folder: Path, *, tokens: dict[str, str] | None = None) -> None:
        self.folder = folder
        self.tokens = tokens
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.app: Any = None

    def start(self) -> LiveServer:
        self.app = with_web_page(create_app(e2e_settings(self.folder, tokens=self.tokens)))
        config = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        self._server = server
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self.loop = loop
            ready.set()
            try:
                loop.run_until_complete(server.serve())
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name=f"uvicorn-{self.port}", daemon=True)
        self._thread.start()
        ready.wait(10)
        deadline = time.monotonic() + 30
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the Planwright server did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout=5)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    @property
    def services(self) -> Services:
        services: Services = self.app.state.services
        return services

    def call(self, work: Coroutine[Any, Any, T], timeout: float = 10) -> T:
        """Run a coroutine on the server's own event loop (e.g. to hold the turn lock)."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    # --- REST helpers -------------------------------------------------------------------

    def request(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = httpx.request(method, self.url + path, headers=headers, timeout=10, **kwargs)
        response.raise_for_status()
        return response.json()

    def create_workflow(self, token: str | None = None, **body: Any) -> dict[str, Any]:
        result: dict[str, Any] = self.request("POST", "/v1/workflows", token, json=body)
        return result

    def create_session(
        self, workflow_id: str, token: str | None = None, *, read_only: bool = False
    ) -> dict[str, Any]:
        result: dict[str, Any] = self.request(
            "POST",
            "/v1/sessions",
            token,
            json={"workflow_id": workflow_id, "read_only": read_only},
        )
        return result

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self.stop()
