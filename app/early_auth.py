"""A request with a body and no valid bearer token gets 401 before the body is read.

FastAPI reads and parses a route's body before it resolves the route's
dependencies, so the token check of :mod:`app.deps` would run only once the
whole body (up to ``max_body_bytes``) had arrived: fifty anonymous 4 MiB POSTs
held ~300 MiB in a worker at once, and a client declaring a body it never sent
kept its request waiting instead of refused. This pure ASGI middleware, just
inside :class:`app.limits.BodySizeLimit`, answers such a request at once with the
401 the dependency gives (:func:`app.http_errors.error_response`), the token
checked by the same :class:`app.auth.Authenticator`.

It only refuses what the app would refuse anyway: requests that carry a body, to
a route whose dependencies include the principal (read from the routes
themselves, so a new public route needs no list kept here), when tokens are
configured. Anything else, bodiless requests, role checks (403) and WebSockets
(which tell a refused token why after accepting) included, goes through to the app
untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from app.auth import bearer_token
from app.deps import _principal
from app.errors import AuthError
from app.http_errors import error_response

if TYPE_CHECKING:
    from app.services import Services


def _header(scope: Scope, name: bytes) -> str | None:
    # The first one, decoded as Starlette's Headers (and so the dependency) read it.
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _has_body(scope: Scope) -> bool:
    """Whether the request declares a body: chunked, or a non-zero length."""
    if _header(scope, b"transfer-encoding") is not None:
        return True
    length = _header(scope, b"content-length")
    if length is None:
        return False
    try:
        return int(length) != 0
    except ValueError:  # not a length the server would accept: treat it as a body
        return True


def _depends_on(dependant: Dependant, call: Callable[..., Any]) -> bool:
    return any(sub.call is call or _depends_on(sub, call) for sub in dependant.dependencies)


class EarlyAuth:
    """``routes`` are the app's routes in the order it matches them (FastAPI keeps an
    included router's routes behind its own, private, route types)."""

    def __init__(self, app: ASGIApp, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.routes = [
            (route, isinstance(route, APIRoute) and _depends_on(route.dependant, _principal))
            for route in routes
        ]
        """Each route, and whether it resolves the principal (needs a valid token)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _has_body(scope):
            refusal = self._refusal(scope)
            if refusal is not None:
                await error_response(refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> AuthError | None:
        """The dependency's error for this request, if its route would raise one."""
        # Set in lifespan; without it (no lifespan run) the dependency path decides.
        services: Services | None = getattr(
            getattr(scope.get("app"), "state", None), "services", None
        )
        if services is None or services.auth.single_user:
            return None
        try:
            services.auth.authenticate(bearer_token(_header(scope, b"authorization")))
        except AuthError as error:
            return error if self._needs_principal(scope) else None
        return None

    def _needs_principal(self, scope: Scope) -> bool:
        # The route the router will pick: the first full match (a path matched with
        # another method gets 405 from the router, and no body is read for it).
        for route, guarded in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return guarded
        return False
