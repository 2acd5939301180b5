"""Polling with a deadline: every wait in a test ends, and a wait that runs out fails with
a message saying what never happened (not a hang cut short by pytest-timeout).

``wait_until`` polls from a plain thread, ``wait_until_async`` from a coroutine (its
predicate may be a plain function or a coroutine function). Both return the predicate's
first truthy answer, so ``row = wait_until(lambda: find(...), ...)`` needs no second read.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

Message = str | Callable[[], str]


class WaitTimeout(AssertionError):
    """A wait ran out: the message says what was awaited (and what was seen)."""


def _fail(message: Message, timeout: float) -> WaitTimeout:
    text = message() if callable(message) else message
    return WaitTimeout(f"{text} (gave up after {timeout:g}s)")


def wait_until(
    predicate: Callable[[], T], *, timeout: float, message: Message, interval: float = 0.05
) -> T:
    """Call ``predicate`` every ``interval`` seconds until it answers something truthy
    and return that; after ``timeout`` seconds fail with ``message`` (a string, or a
    function called then, to show the state at the deadline)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = predicate()
        if answer:
            return answer
        if time.monotonic() >= deadline:
            raise _fail(message, timeout)
        time.sleep(interval)


async def wait_until_async(
    predicate: Callable[[], T | Awaitable[T]],
    *,
    timeout: float,
    message: Message,
    interval: float = 0.05,
) -> T:
    """``wait_until`` inside a coroutine: sleeps with ``asyncio.sleep`` so the event loop
    (and the service under test on it) keeps running; awaits ``predicate`` if it is async."""
    deadline = time.monotonic() + timeout
    while True:
        answer = predicate()
        if inspect.isawaitable(answer):
            answer = await answer
        if answer:
            return answer
        if time.monotonic() >= deadline:
            raise _fail(message, timeout)
        await asyncio.sleep(interval)
