"""CPU-heavy YAML work off the event loop, without collector pauses.

Parsing a 3,000-step document allocates about a million objects, which sets off
several full (generation 2) collections of the cyclic garbage collector; each
stops every thread, the event loop included, for up to ~300 ms. Running the work
in the thread pool keeps the loop free between bytecodes, but not through those
pauses, so the collector is also paused while any such job runs (and resumed when
the last one ends; reference counting still frees everything acyclic meanwhile),
and what the jobs leave alive is then kept out of later full collections (``_settle``).
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from starlette.concurrency import run_in_threadpool

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_running = 0  # jobs now running with the collector paused
_resume = False  # whether the collector was on when the first of them started


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
                _settle()
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
    gc.collect(1)
    gc.freeze()


async def off_loop(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(*args, **kwargs)`` in the thread pool, with the collector paused."""
    return await run_in_threadpool(functools.partial(_paused, fn, *args, **kwargs))
