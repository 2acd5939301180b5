"""off_loop: the work runs in another thread with the collector paused, and the
collector comes back once the last such job ends.

A job held open waits on an event with no deadline of its own and is always released in
a ``finally`` (a deadline in the job would let a slow machine end it early, and the
"still running" checks would then see it gone). Whether an object is frozen is read
from the object itself (frozen objects are not in ``gc.get_objects()``), never from the
freeze count going up or down, which every other allocation in the process moves too.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref

import pytest

from app import offload
from app.offload import off_loop, tidy, tidy_periodically
from tests.waiting import wait_until_async


@pytest.fixture(autouse=True)
async def _no_other_off_loop_job() -> None:
    """The pause and the freeze are process-wide: start each test once no job of an
    earlier test (an app's thread-pool work outliving its test) still holds them."""
    await wait_until_async(
        lambda: offload._running == 0 and gc.isenabled(),
        timeout=10,
        message=lambda: f"{offload._running} off-loop job(s) of an earlier test still run",
    )


def _frozen(obj: object) -> bool:
    """Whether the collector skips ``obj`` (moved to the permanent generation)."""
    return gc.is_tracked(obj) and all(o is not obj for o in gc.get_objects())


async def test_work_runs_off_the_loop_with_the_collector_paused_until_the_last_job_ends() -> None:
    assert gc.isenabled()
    loop_thread = threading.get_ident()
    release = threading.Event()
    seen: list[tuple[int, bool]] = []

    def job(wait: bool) -> int:
        seen.append((threading.get_ident(), gc.isenabled()))
        if wait:
            release.wait()
        return 7

    slow = asyncio.ensure_future(off_loop(job, True))
    try:
        await wait_until_async(lambda: seen, timeout=5, message="the off-loop job never started")
        assert await off_loop(job, False) == 7
        assert not slow.done()
        assert not gc.isenabled(), "a job still running: the collector stays paused"
    finally:
        release.set()
    assert await slow == 7
    assert gc.isenabled()
    assert all(thread != loop_thread and not enabled for thread, enabled in seen)


async def test_the_collector_stays_off_if_it_was_off() -> None:
    gc.disable()
    try:
        await off_loop(lambda: None)
        assert not gc.isenabled()
    finally:
        gc.enable()


class _Node:
    """A weak-referenceable object that can hold a reference to itself."""

    me: _Node | None = None


async def test_what_a_job_leaves_alive_is_kept_out_of_full_collections() -> None:
    """Young cycles the job made are collected when it ends; its surviving objects
    are frozen, so the next full collection does not walk them (on the loop's time)."""

    def job() -> tuple[list[list[int]], weakref.ref[_Node]]:
        cycle = _Node()
        cycle.me = cycle  # garbage once the job returns: only the collector frees it
        return [[i] for i in range(5000)], weakref.ref(cycle)

    kept, garbage = await off_loop(job)
    assert garbage() is None
    assert _frozen(kept) and _frozen(kept[0]) and _frozen(kept[-1])
    assert gc.isenabled()


async def test_garbage_frozen_while_it_was_alive_is_freed_by_a_tidy() -> None:
    """A cycle alive while a job settles is frozen with everything else; once it is
    garbage no collection sees it, until a tidy unfreezes, collects and freezes again."""
    cycle = _Node()
    cycle.me = cycle
    alive = weakref.ref(cycle)
    kept = await off_loop(lambda: [[i] for i in range(100)])
    assert _frozen(cycle) and _frozen(kept)
    del cycle  # now garbage, but frozen
    gc.collect()
    assert alive() is not None, "a frozen cycle is not collected"
    found = await asyncio.to_thread(tidy)  # not through off_loop: that would settle again
    assert found is not None and found >= 1
    assert alive() is None
    assert _frozen(kept), "what is alive is frozen again"
    assert gc.isenabled()


async def test_a_tidy_does_nothing_when_no_job_froze_since_the_last() -> None:
    await off_loop(lambda: None)
    assert await asyncio.to_thread(tidy) is not None
    assert await asyncio.to_thread(tidy) is None


async def test_a_tidy_waits_for_no_job_and_never_collects_under_a_running_one() -> None:
    await off_loop(lambda: None)
    release = threading.Event()
    started = threading.Event()

    def job() -> None:
        started.set()
        release.wait()

    running = asyncio.ensure_future(off_loop(job))
    try:
        await wait_until_async(started.is_set, timeout=5, message="the off-loop job never started")
        assert await asyncio.to_thread(tidy) is None, "a job is running with the collector paused"
        assert not running.done()
        assert not gc.isenabled()
    finally:
        release.set()
    await running
    assert await asyncio.to_thread(tidy) is not None
    assert gc.isenabled()


async def test_tidies_run_every_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def counting_tidy() -> int:
        calls.append(threading.get_ident())
        return 0

    monkeypatch.setattr(offload, "tidy", counting_tidy)
    task = asyncio.ensure_future(tidy_periodically(0.01))
    await wait_until_async(
        lambda: len(calls) >= 3,
        timeout=5,
        message=lambda: f"tidy_periodically(0.01) ticked {len(calls)} times, not 3",
    )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert threading.get_ident() not in calls, "tidies run in the thread pool, not on the loop"


async def test_the_collector_comes_back_even_if_settling_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def failing_settle() -> None:
        raise MemoryError("no room to collect")

    monkeypatch.setattr(offload, "_settle", failing_settle)
    with pytest.raises(MemoryError):
        await off_loop(lambda: None)
    assert gc.isenabled()
