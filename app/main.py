"""The FastAPI application: built by a factory, resources wired in ``lifespan``."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError, WebSocketRequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.websockets import WebSocket

from agents.api import ChatModel, ModelRole
from app import log_redaction, unavailable
from app.api import meta, projects, runs, schemas, sessions, web, workflows
from app.early_auth import EarlyAuth
from app.http_errors import error_response, framework_error, validation_error
from app.limits import BodySizeLimit, BodyTooLargeError, too_large_response
from app.offload import tidy_periodically
from app.origin import SameOriginWebSockets
from app.server_errors import ServerErrors
from app.services import open_services
from app.settings import Settings
from app.web.assets import modules_dir
from app.ws import chat, watch
from app.ws.chat import refuse_invalid_socket
from tools.errors import PlanwrightError

SWITCH_INTERVAL_S = 0.001
"""How long a thread may hold the GIL while another waits (Python's default: 5 ms)."""


def create_app(
    settings: Settings | None = None, *, models: Mapping[ModelRole, ChatModel] | None = None
) -> FastAPI:
    settings = settings or Settings()
    log_redaction.install()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_services(settings, models=models) as services:
            app.state.services = services
            # Everything built so far (~300k objects: modules, models, catalogue) lives
            # as long as the process; a full collection walking it stops every thread
            # for ~200 ms. Frozen, later full collections walk only newer objects.
            gc.collect()
            gc.freeze()
            # CPU-bound work in the thread pool (parsing a large PUT) holds the GIL for
            # the default 5 ms switch interval at a time; the loop, which needs it back for
            # every frame it writes, then sends a version to its watchers in 5 ms steps.
            sys.setswitchinterval(SWITCH_INTERVAL_S)
            interval = settings.gc_tidy_interval_s
            tidying = asyncio.create_task(tidy_periodically(interval)) if interval else None
            try:
                yield
            finally:
                if tidying is not None:
                    tidying.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await tidying

    app = FastAPI(
        title="Planwright",
        version="0.1.0",
        lifespan=lifespan,
        responses=schemas.ERROR_RESPONSES,
    )
    modules = (meta, workflows, runs, projects, sessions, chat, watch, web)
    routers = [module.router for module in modules]
    if settings.single_user:
        # No tokens means anyone who can reach the port is the user: only answer to
        # loopback host names, so a web page cannot rebind its DNS onto us.
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.allowed_hosts)
        app.add_middleware(SameOriginWebSockets, allowed_hosts=settings.allowed_hosts)
    # Inside the size limit: a body without a valid token gets 401 before it is read
    # (FastAPI would read and parse it before the token dependency ran).
    app.add_middleware(EarlyAuth, routes=[route for router in routers for route in router.routes])
    # Outside the others: bodies are refused before anything reads them.
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    # Added last, so outermost: an exception nothing answered is 500 internal_error in
    # the one error shape, logged once, and the connection stays open.
    app.add_middleware(ServerErrors)

    @app.exception_handler(BodyTooLargeError)
    async def body_too_large(request: Request, exc: BodyTooLargeError) -> JSONResponse:
        return too_large_response(exc.limit)

    # Every error answer has one shape, the framework's own refusals included.
    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return error_response(framework_error(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(validation_error(exc.errors()))

    @app.exception_handler(WebSocketRequestValidationError)
    async def invalid_socket(websocket: WebSocket, exc: WebSocketRequestValidationError) -> None:
        await refuse_invalid_socket(websocket, validation_error(exc.errors()))

    @app.exception_handler(PlanwrightError)
    async def planwright_error(request: Request, exc: PlanwrightError) -> JSONResponse:
        return error_response(exc)

    unavailable.install(app)  # the database or Redis out of reach: 503, not a bare 500
    app.router.routes.append(web.vendor_files(modules_dir(settings.web_assets_dir)))
    for router in routers:
        app.include_router(router)
    return app
