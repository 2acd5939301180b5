"""tests/waiting.py: a wait returns the predicate's first truthy answer or fails with its
message once the deadline passes; it never hangs."""

from __future__ import annotations

import itertools

import pytest

from tests.waiting import WaitTimeout, wait_until, wait_until_async


def test_returns_the_first_truthy_answer() -> None:
    answers = iter([None, 0, "", "found", "later"])
    assert wait_until(lambda: next(answers), timeout=5, message="never", interval=0) == "found"


def test_fails_with_the_message_shown_at_the_deadline() -> None:
    polls = itertools.count(1)
    seen: list[int] = []
    with pytest.raises(WaitTimeout, match=r"polled \d+ times \(gave up after 0.05s\)") as failed:
        wait_until(
            lambda: seen.append(next(polls)),
            timeout=0.05,
            message=lambda: f"polled {len(seen)} times",
            interval=0.01,
        )
    assert isinstance(failed.value, AssertionError)
    assert len(seen) >= 2, "polled until the deadline, not once"


async def test_async_awaits_a_coroutine_predicate() -> None:
    calls: list[int] = []

    async def ready() -> bool:
        calls.append(1)
        return len(calls) == 3

    assert await wait_until_async(ready, timeout=5, message="never", interval=0) is True
    assert len(calls) == 3


async def test_async_takes_a_plain_predicate_and_times_out() -> None:
    with pytest.raises(WaitTimeout, match="the flag never rose"):
        await wait_until_async(lambda: False, timeout=0.05, message="the flag never rose")
