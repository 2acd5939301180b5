"""The web page: ``/`` serves ``index.html``, ``/static/*`` the files beside it, and
``/static/vendor/<package>/<path>`` the npm libraries it imports (:mod:`app.web.assets`).

Everything the page needs comes from this server (no CDN), so a strict
Content-Security-Policy holds: scripts, styles and sockets from this origin only.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Mount
from starlette.types import Scope

from app.web import INDEX_HTML, WEB_DIR
from app.web.assets import packages

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)

router = APIRouter(include_in_schema=False)


@router.get("/")
def index() -> FileResponse:
    return FileResponse(
        INDEX_HTML,
        media_type="text/html; charset=utf-8",
        headers={
            "Cache-Control": "no-cache",
            "Content-Security-Policy": CONTENT_SECURITY_POLICY,
            "X-Content-Type-Options": "nosniff",
        },
    )


class _Static(StaticFiles):
    """StaticFiles that serves only web assets (never the package's Python files) and
    types ES modules as JavaScript on every platform."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        if path.endswith((".py", ".pyc")) or "__pycache__" in path:
            raise HTTPException(status_code=404)
        response = await super().get_response(path, scope)
        if path.endswith(".mjs") and response.status_code == 200:
            response.headers["content-type"] = "text/javascript; charset=utf-8"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers.setdefault("Cache-Control", "no-cache")
        return response


class _Vendor(_Static):
    """Files of the pinned npm packages only (``node_modules`` holds more: their own
    dependencies and npm's bookkeeping); 404 until they are installed."""

    def __init__(self, directory: Path, packages: tuple[str, ...]) -> None:
        super().__init__(directory=directory, check_dir=False)
        self._prefixes = tuple(f"{name}/" for name in packages)

    async def get_response(self, path: str, scope: Scope) -> Response:
        if not path.startswith(self._prefixes):
            raise HTTPException(status_code=404)
        return await super().get_response(path, scope)


def vendor_files(directory: Path) -> Mount:
    """``/static/vendor``: mounted by the app before ``/static`` (the first match wins)."""
    return Mount("/static/vendor", _Vendor(directory, packages()), name="vendor")


router.mount("/static", _Static(directory=WEB_DIR), name="static")
