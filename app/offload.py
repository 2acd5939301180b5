"""CPU-heavy YAML work off the event loop, without collector pauses.

Parsing a 3,000-step document allocates about a million objects, which sets off
several full (generation 2) collections of the cyclic garbage collector; each
stops every thread, the event loop included, for up to ~300 ms. Running the work
in the thread pool keeps the loop free between bytecodes, but not through those
pauses, so the collector is also paused while any such job runs (and resumed when
the last one ends; reference counting still frees everything acyclic meanwhile),
and what the jobs leave alive is then kept out of later full collections (``_settle``).

Freezing has a price: whatever was alive at that moment (a request in flight, its
frames and exceptions) and later becomes cyclic garbage is never collected while
frozen: ~85 objects per ``PUT`` measured, without bound over a long uptime.
:func:`tidy` gives that back (unfreeze, one full collection, freeze again);
:func:`tidy_periodically` runs it now and then (``gc_tidy_interval_s``). It stops
every thread for as long as a full collection of the whole heap takes (~300 ms
at ~340k objects), so it runs rarely, and only once some job has frozen since.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import threading
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from starlette.concurrency import run_in_threadpool

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_running = 0  # jobs now running with the collector paused
_resume = False  # whether the collector was on when the first of them started
_frozen_since_tidy = False  # whether a job froze objects since the last tidy


def _paused(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    global _running, _resume
    with _lock:
        if _running == 0:
            _resume = gc.isenabled()
            gc.disable()
        _running += 1
    try:
        return fn(*args, **kwargs)
    finally:
        with _lock:
            _running -= 1
            if _running == 0 and _resume:
                try:
                    _settle()
                finally:  # the collector must come back even if settling fails
                    gc.enable()


def _settle() -> None:
    """Keep what the paused jobs left alive out of the next full collections.

    A parsed 3,000-step document is ~100k objects that survive the job (it is kept
    warm for the next turn). Resumed as they are, they tip the collector into a
    full collection moments later, which walks every object with all threads
    stopped: ~150 ms, on the event loop as likely as anywhere. So the young
    garbage the jobs made (reference cycles such as their YAML instances) is
    collected now, here, and everything still alive is frozen (``gc.freeze``):
    full collections skip it. Frozen objects are still freed by reference counting
    when released (documents hold no cycles); only cyclic garbage that already sat
    in the oldest generation waits (``gc.unfreeze``, or the process's end).
    """
    global _frozen_since_tidy
    gc.collect(1)
    gc.freeze()
    _frozen_since_tidy = True


def tidy() -> int | None:
    """Collect the cyclic garbage frozen by ``_settle`` (see the module): how many
    unreachable objects were found, or ``None`` when there was nothing to do (no job
    froze since the last tidy) or it would collect under a running job."""
    global _frozen_since_tidy
    with _lock:  # no job starts or settles meanwhile
        if _running or not _frozen_since_tidy or not gc.isenabled():
            return None
        _frozen_since_tidy = False
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        return found


async def tidy_periodically(interval_s: float) -> None:
    """Run :func:`tidy` in the thread pool every ``interval_s`` seconds, forever."""
    while True:
        await asyncio.sleep(interval_s)
        started = time.perf_counter()
        try:
            found = await run_in_threadpool(tidy)
        except Exception:  # e.g. a finaliser raised: the next interval tries again
            log.exception("heap tidy failed")
            continue
        if found is not None:
            log.info(
                "heap tidy: %d unreachable objects freed in %.0f ms",
                found,
                (time.perf_counter() - started) * 1000,
            )


async def off_loop(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(*args, **kwargs)`` in the thread pool, with the collector paused."""
    return await run_in_threadpool(functools.partial(_paused, fn, *args, **kwargs))
