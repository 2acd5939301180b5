"""off_loop: the work runs in another thread with the collector paused, and the
collector comes back once the last such job ends."""

from __future__ import annotations

import asyncio
import gc
import threading

from app.offload import off_loop


async def test_work_runs_off_the_loop_with_the_collector_paused_until_the_last_job_ends() -> None:
    assert gc.isenabled()
    loop_thread = threading.get_ident()
    release = threading.Event()
    seen: list[tuple[int, bool]] = []

    def job(wait: bool) -> int:
        seen.append((threading.get_ident(), gc.isenabled()))
        if wait:
            release.wait(5)
        return 7

    slow = asyncio.ensure_future(off_loop(job, True))
    while not seen:
        await asyncio.sleep(0.01)
    assert await off_loop(job, False) == 7
    assert not gc.isenabled(), "a job still running: the collector stays paused"
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
