"""End-to-end fixtures: the real server (uvicorn, SQLite, offline model) and real
headless Chromium driven by Playwright.

Chromium comes from Debian (``apt-get install -y chromium``; CI installs it).
When it is missing these tests FAIL rather than skip: a skipped browser suite
would look green while testing nothing. Playwright's own browser download
(``playwright install``) is never used.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.e2e.server import EDITOR, TOKENS, LiveServer

CHROMIUM = os.environ.get("PLANWRIGHT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1440, "height": 900}


def chromium_executable() -> str:
    found = shutil.which(CHROMIUM) or (CHROMIUM if os.access(CHROMIUM, os.X_OK) else None)
    if found is None:
        pytest.fail(
            f"Chromium is not installed at {CHROMIUM}: run `apt-get install -y chromium` "
            "(CI's .ci/run installs it). The end-to-end tests need a real browser.",
            pytrace=False,
        )
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # Module scope, not session: Playwright's sync API keeps an event loop running on
    # this thread while it is open, which would break async tests collected later.
    executable = chromium_executable()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: pip install -e '.[dev]'", pytrace=False)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, args=CHROMIUM_ARGS, headless=True
        )
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server with editor and reviewer tokens; each test makes its own workflows."""
    with LiveServer(tmp_path_factory.mktemp("e2e-server"), tokens=TOKENS) as live:
        yield live


class PageErrors(list[str]):
    """Uncaught exceptions and console errors seen on a page."""


@pytest.fixture
def open_page(browser: Any) -> Iterator[Callable[..., Any]]:
    """``open_page(url, token=EDITOR, setup=None)`` -> a Playwright page in a fresh browser
    context (its own localStorage), with the token already saved as if typed in;
    ``setup(context)`` runs before the page opens (e.g. to install routes)."""
    contexts: list[Any] = []
    errors = PageErrors()

    def open_(
        url: str, token: str | None = EDITOR, setup: Callable[[Any], None] | None = None
    ) -> Any:
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(15_000)
        if token:
            context.add_init_script(f"localStorage.setItem('planwright.token', {token!r});")
        if setup is not None:
            setup(context)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
        page.on(
            "console",
            lambda msg: errors.append(f"console: {msg.text}") if msg.type == "error" else None,
        )
        page.goto(url)
        return page

    open_.errors = errors  # type: ignore[attr-defined]
    yield open_
    for context in contexts:
        context.close()
    unexpected = [e for e in errors if not _expected_console_error(e)]
    assert not unexpected, f"errors in the page: {unexpected}"


def _expected_console_error(text: str) -> bool:
    # Chromium logs failed requests the page handles itself (401 before a token is
    # entered, 403 for reviewers, sockets refused while the server restarts).
    return text.startswith("console: ") and any(
        marker in text
        for marker in ("401", "403", "ERR_CONNECTION_REFUSED", "WebSocket connection", "404")
    )
