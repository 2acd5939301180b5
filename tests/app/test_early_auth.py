"""EarlyAuth: a body without a valid token gets 401 before the app reads a byte of it.

Driven at the ASGI level, so a test sees whether ``receive`` was ever called and
whether the endpoint ran. A small app with routes of each kind (editor, any
principal, public) exercises the middleware; the real app's routes check the
wiring in ``create_app``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

from app.api import meta, projects, runs, sessions, web, workflows
from app.auth import Authenticator
from app.deps import EditorDep, PrincipalDep
from app.early_auth import EarlyAuth
from app.http_errors import error_response
from app.main import create_app
from app.settings import Settings
from tools.errors import PlanwrightError

EDITOR = "editor-token-0123456789"
REVIEWER = "reviewer-token-0123456789"
TOKENS = {EDITOR: "editor", REVIEWER: "reviewer"}
BODY = b'{"yaml": "' + b"x" * 100_000 + b'"}'


def _settings(tokens: dict[str, str] | None = TOKENS) -> Settings:
    return Settings(
        environment="test",
        tokens=json.dumps(tokens) if tokens else None,
        redis_url=None,
        anthropic_api_key=None,
    )


class Exchange:
    """One request driven through an ASGI app: what it asked for and what it sent."""

    def __init__(self, headers: dict[str, str], chunks: Sequence[bytes]) -> None:
        self.headers = [(k.lower().encode(), v.encode("latin-1")) for k, v in headers.items()]
        self.chunks = list(chunks)
        self.receive_calls = 0
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        self.receive_calls += 1
        if self.chunks:
            chunk = self.chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(self.chunks)}
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def response_headers(self) -> dict[str, str]:
        return {k.decode(): v.decode() for k, v in self.sent[0]["headers"]}

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent[1:])


async def _call(
    app: Any,
    method: str,
    path: str,
    *,
    token: str | None = None,
    body: bytes = b"",
    chunked: bool = False,
) -> Exchange:
    headers = {"host": "127.0.0.1", "content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    if chunked:
        headers["transfer-encoding"] = "chunked"
    elif body:
        headers["content-length"] = str(len(body))
    pieces = [body[i : i + 65536] for i in range(0, len(body), 65536)] or [b""]
    exchange = Exchange(headers, pieces)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": exchange.headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, exchange.receive, exchange.send)
    return exchange


class SmallApp:
    """Routes of each kind behind EarlyAuth, counting the endpoint calls."""

    def __init__(self, settings: Settings) -> None:
        self.calls: list[str] = []
        router = APIRouter(prefix="/v1/things")

        # A body parameter, as the real routes have: FastAPI reads and parses it
        # before it resolves the principal.
        @router.post("")
        async def create(payload: dict[str, Any], principal: EditorDep) -> dict[str, Any]:
            self.calls.append("create")
            return {"payload": payload, "author": principal.author}

        @router.get("")
        async def listing(principal: PrincipalDep) -> dict[str, str]:
            self.calls.append("listing")
            return {"role": principal.role}

        @router.post("/public")
        async def public(request: Request) -> dict[str, int]:
            self.calls.append("public")
            return {"length": len(await request.body())}

        self.app = FastAPI()
        self.app.state.services = SimpleNamespace(auth=Authenticator(settings))
        self.app.add_middleware(EarlyAuth, routes=router.routes)

        @self.app.exception_handler(PlanwrightError)
        async def planwright_error(request: Request, exc: PlanwrightError) -> JSONResponse:
            return error_response(exc)

        self.app.include_router(router)


@pytest.fixture
def small() -> SmallApp:
    return SmallApp(_settings())


async def test_a_valid_token_passes_with_the_body_intact(small: SmallApp) -> None:
    exchange = await _call(small.app, "POST", "/v1/things", token=EDITOR, body=BODY)
    assert exchange.status == 200, exchange.body
    assert json.loads(exchange.body)["payload"] == json.loads(BODY)
    assert exchange.receive_calls > 0
    assert small.calls == ["create"]


async def test_a_chunked_body_with_a_valid_token_passes_intact(small: SmallApp) -> None:
    exchange = await _call(small.app, "POST", "/v1/things", token=EDITOR, body=BODY, chunked=True)
    assert exchange.status == 200, exchange.body
    assert json.loads(exchange.body)["payload"] == json.loads(BODY)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize(
    ("token", "message"),
    [(None, "A bearer token is required."), ("not-a-token", "The token is not valid.")],
    ids=["no-token", "wrong-token"],
)
async def test_a_body_without_a_valid_token_gets_401_and_the_app_never_runs(
    small: SmallApp, token: str | None, message: str, chunked: bool
) -> None:
    exchange = await _call(small.app, "POST", "/v1/things", token=token, body=BODY, chunked=chunked)
    assert exchange.status == 401
    assert json.loads(exchange.body) == {"error": {"code": "unauthorized", "message": message}}
    assert exchange.response_headers["www-authenticate"] == "Bearer"
    assert exchange.receive_calls == 0, "the body was read"
    assert small.calls == []


@pytest.mark.parametrize("token", [None, "not-a-token"], ids=["no-token", "wrong-token"])
async def test_the_early_401_is_the_dependencys_401(small: SmallApp, token: str | None) -> None:
    # A GET has no body: the middleware lets it through and the dependency refuses it.
    dependency = await _call(small.app, "GET", "/v1/things", token=token)
    early = await _call(small.app, "POST", "/v1/things", token=token, body=BODY)
    assert dependency.status == early.status == 401
    assert dependency.body == early.body
    assert dependency.response_headers == early.response_headers
    assert small.calls == []


async def test_a_get_without_a_body_falls_through_to_the_dependency(small: SmallApp) -> None:
    refused = await _call(small.app, "GET", "/v1/things")
    assert refused.status == 401
    allowed = await _call(small.app, "GET", "/v1/things", token=REVIEWER)
    assert allowed.status == 200
    assert json.loads(allowed.body) == {"role": "reviewer"}
    assert small.calls == ["listing"]


async def test_an_empty_body_falls_through_to_the_dependency(small: SmallApp) -> None:
    exchange = await _call(small.app, "POST", "/v1/things", body=b"")
    assert exchange.status == 401
    assert exchange.receive_calls > 0, "it reached the route, which read the (empty) body"
    assert small.calls == []


async def test_roles_are_left_to_the_dependencies(small: SmallApp) -> None:
    exchange = await _call(small.app, "POST", "/v1/things", token=REVIEWER, body=BODY)
    assert exchange.status == 403
    assert json.loads(exchange.body)["error"]["code"] == "forbidden"
    assert exchange.receive_calls > 0  # a valid token: the body was the app's to read


async def test_a_public_route_reads_its_body_without_a_token(small: SmallApp) -> None:
    exchange = await _call(small.app, "POST", "/v1/things/public", body=BODY)
    assert exchange.status == 200
    assert json.loads(exchange.body) == {"length": len(BODY)}
    assert small.calls == ["public"]


async def test_single_user_mode_passes_everything_through() -> None:
    small = SmallApp(_settings(tokens=None))
    exchange = await _call(small.app, "POST", "/v1/things", body=BODY)
    assert exchange.status == 200, exchange.body
    assert json.loads(exchange.body) == {"payload": json.loads(BODY), "author": "local user"}
    assert small.calls == ["create"]


async def test_a_websocket_scope_is_passed_through() -> None:
    reached: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope)

    scope = {"type": "websocket", "path": "/v1/things", "headers": [(b"content-length", b"9")]}
    await EarlyAuth(app, routes=[])(scope, _never, _never)
    assert reached == [scope]


async def _never(*args: Any) -> Any:
    raise AssertionError("called")


# --------------------------------------------------------------------------- #
# The real app: which of its routes are refused early
# --------------------------------------------------------------------------- #


def _http_routes() -> list[tuple[str, str, bool]]:
    """(method, concrete path, needs a token) for every HTTP route of the app."""
    principal_routes = {
        ("POST", "/v1/workflows"),
        ("POST", "/v1/workflows/import"),
        ("GET", "/v1/workflows"),
        ("GET", "/v1/workflows/x"),
        ("GET", "/v1/workflows/x/export"),
        ("PUT", "/v1/workflows/x"),
        ("GET", "/v1/workflows/x/versions"),
        ("GET", "/v1/workflows/x/versions/1"),
        ("POST", "/v1/workflows/x/revert"),
        ("POST", "/v1/projects"),
        ("GET", "/v1/projects"),
        ("GET", "/v1/projects/x"),
        ("GET", "/v1/projects/x/export"),
        ("GET", "/v1/projects/x/credentials"),
        ("PUT", "/v1/projects/x/credentials"),
        ("POST", "/v1/sessions"),
        ("GET", "/v1/sessions/x"),
        ("POST", "/v1/sessions/x/review"),
        ("POST", "/v1/workflows/x/runs"),
        ("GET", "/v1/workflows/x/runs"),
        ("GET", "/v1/runs/x"),
    }
    routes = []
    for module in (meta, workflows, projects, sessions, runs, web):
        for route in module.router.routes:
            for method in sorted(getattr(route, "methods", None) or {"GET"}):
                path = getattr(route, "path", "/")
                for name in ("workflow_id", "project_id", "session_id", "run_id"):
                    path = path.replace("{" + name + "}", "x")
                path = path.replace("{version}", "1")
                if path == "/static":
                    path = "/static/app.js"
                routes.append((method, path, (method, path) in principal_routes))
    assert {(m, p) for m, p, guarded in routes if guarded} == principal_routes
    return routes


@pytest.mark.parametrize(("method", "path", "guarded"), _http_routes())
async def test_the_app_refuses_early_exactly_the_routes_that_need_a_token(
    method: str, path: str, guarded: bool
) -> None:
    settings = _settings()
    app = create_app(settings)
    # No lifespan here: only what the routes below need.
    app.state.services = SimpleNamespace(auth=Authenticator(settings), settings=settings)
    exchange = await _call(app, method, path, body=b"{}")
    if guarded:
        assert exchange.status == 401
        assert exchange.receive_calls == 0
    else:
        assert exchange.status != 401
