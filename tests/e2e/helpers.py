"""Helpers the end-to-end tests share: screenshots, the web page's waits and the terminal
client run on its own event loop."""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import queue
import select
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from playwright.sync_api import expect

from app import client
from tests.documents import CODED_REFERRAL_DOC
from tests.e2e.server import EDITOR, LiveServer
from tests.waiting import wait_until
from tools.catalogue.adaptors import load_catalogue

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "e2e"


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


OpenPage = Callable[..., Any]


CREATE = (
    "create a workflow that gets referrals from http, checks coverage with fhir, "
    "then emails the coordinator with gmail"
)


CODED_DOC = CODED_REFERRAL_DOC  # imported through the page


def at_version(page: Any, version: int) -> None:
    """Wait until the page shows ``version`` and no turn is running."""
    page.wait_for_selector(f'body[data-version="{version}"][data-turn="idle"]')


def send(page: Any, text: str) -> None:
    replies = page.locator(".msg.assistant:not(.streaming)")
    before = replies.count()
    page.fill("#chat-input", text)
    page.press("#chat-input", "Enter")
    expect(replies).to_have_count(before + 1)
    page.wait_for_selector('body[data-turn="idle"]')


ROOT = Path(__file__).resolve().parents[2]


T = TypeVar("T")


def run_own_loop(work: Coroutine[Any, Any, T], timeout: float = 60) -> T:
    """Run ``work`` on a fresh event loop in its own thread (whatever else this thread
    runs, e.g. Playwright's loop when the browser tests share the session)."""
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(asyncio.run(asyncio.wait_for(work, timeout)))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, name="chat-client")
    thread.start()
    thread.join(timeout + 5)
    if errors:
        raise errors[0]
    assert results, "the client did not finish"
    return results[0]


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="planwright")
    client.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["chat", *argv])


def chat(server: LiveServer, *argv: str, lines: list[str], token: str | None = EDITOR) -> str:
    """Run the client on a fresh event loop; its transcript (input is echoed)."""
    args = parse("--url", server.url, *(["--token", token] if token else []), *argv)
    stdin = io.StringIO("".join(line + "\n" for line in lines))
    stdout = io.StringIO()
    code = run_own_loop(client.run_chat(args, stdin, stdout))
    transcript = stdout.getvalue()
    assert code == 0, transcript
    return transcript


def after(transcript: str, marker: str) -> str:
    assert marker in transcript, transcript
    return transcript.split(marker, 1)[1]


class LiveInput:
    """A stdin whose lines the test types one at a time, while the client runs."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str] = queue.Queue()

    def type(self, line: str) -> None:
        self.lines.put(line + "\n")

    def readline(self) -> str:
        return self.lines.get()

    def isatty(self) -> bool:
        return False


def wait_for(stdout: io.StringIO, text: str, timeout: float = 20) -> str:
    """The client's output once ``text`` is in it."""
    wait_until(
        lambda: text in stdout.getvalue(),
        timeout=timeout,
        message=lambda: f"no {text!r} in:\n{stdout.getvalue()}",
    )
    return stdout.getvalue()


def read_until(fd: int, needle: str, seen: list[str], timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while needle not in "".join(seen):
        if time.monotonic() > deadline:
            raise AssertionError(f"no {needle!r} in terminal output:\n{''.join(seen)}")
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen.append(os.read(fd, 65536).decode("utf-8", errors="replace"))
            except OSError:
                break
    return "".join(seen)


SPEC = (
    Path(__file__).resolve().parents[1] / "agents" / "offline" / "specs" / "four_processes.md"
).read_text(encoding="utf-8")


# How the terminal's tree shows a step's adaptor: new steps are pinned to the version
# the adaptor facts list as current (http 7.3.2).
TREE = {
    short: f"{short} {load_catalogue().get(short).version}"  # type: ignore[union-attr]
    for short in ("http", "fhir", "gmail", "common", "twilio")
}
