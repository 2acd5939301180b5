"""The turn lock around a turn's work: taken (or waited for in line, with ``queued``
frames), held while the work runs, released before the work's last frame goes out.
Shared by workflow turns, their answers and plan turns
(:class:`app.turn_service.TurnServiceBase`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from app.bus.base import LockHandle, TurnLock
from app.bus.queue import wait_in_line
from app.turn_records import Send
from app.unavailable import unavailable
from app.ws.protocol import QueuedFrame, ServerFrame, error_frame
from tools.errors import PlanwrightError

log = logging.getLogger("app.turns")

CANCELLED_BEFORE_START = "The turn was cancelled before it started; nothing changed."


class TurnLocking:
    """Taking and holding the turn lock; the service sets the three fields."""

    lock: TurnLock
    """The bus's lock, in-process or across workers (Redis)."""
    lock_ttl_s: float
    """The lock's outer expiry; the holder's heartbeat frees it sooner when it dies."""
    max_queue: int
    """Turns that may wait in line for a busy workflow (``app.bus.queue``)."""

    async def take_lock(
        self, key: str, send: Send, *, what: str = "workflow", queue: bool = False
    ) -> LockHandle | None:
        """The turn lock of ``key`` (a workflow id, or a project's plan-turn key), or
        ``None`` after telling the client why not. With ``queue``, a busy ``key`` puts
        the turn in line (``queued`` frames as it moves up) while there is room."""

        async def queued(position: int) -> None:
            await send(QueuedFrame(position=position))

        try:
            if queue and self.max_queue > 0:
                handle = await wait_in_line(
                    self.lock,
                    key,
                    ttl_s=self.lock_ttl_s,
                    max_queue=self.max_queue,
                    on_position=queued,
                )
            else:
                handle = await self.lock.acquire(key, ttl_s=self.lock_ttl_s)
        except asyncio.CancelledError:
            raise
        except Exception:  # Redis unreachable or too slow: say so rather than go silent
            log.warning("could not take the turn lock of %s", key, exc_info=True)
            await send(
                error_frame(
                    "lock_unavailable",
                    "Could not start the turn: the turn lock did not answer in time; "
                    "nothing changed, try again shortly.",
                )
            )
            return None
        if handle is None:
            waiting = f" and {self.max_queue} more are waiting" if queue and self.max_queue else ""
            await send(
                error_frame("busy", f"Another turn is running on this {what}{waiting}; try again.")
            )
        return handle

    async def under_lock(
        self,
        key: str,
        send: Send,
        work: Callable[[], Awaitable[ServerFrame | None]],
        *,
        what: str = "workflow",
        subject: str = "turn",
        doing: str = "start",
        turn_id: str | None = None,
        cancelled: str = "",
        queue: bool = False,
    ) -> None:
        """Run ``work`` holding ``key``'s turn lock; the frame it returns (or the error
        frame for how it failed) is sent once the lock is released, so a client that
        starts its next turn on that frame never finds its own lock still held."""
        try:
            handle = await self.take_lock(key, send, what=what, queue=queue)
        except asyncio.CancelledError:
            await send(error_frame("cancelled", CANCELLED_BEFORE_START, turn_id))
            raise
        if handle is None:
            return
        last: ServerFrame | None = None
        try:
            last = await work()
        except asyncio.CancelledError:
            last = error_frame("cancelled", f"The {subject} was cancelled.{cancelled}", turn_id)
            raise
        except PlanwrightError as exc:
            last = error_frame(exc.code, exc.message, turn_id)
        except Exception as exc:
            down = unavailable(exc)
            if down is not None:  # the database or Redis went away mid-turn
                log.warning("%s could not %s (%s): %s", subject, doing, key, exc)
                last = error_frame(down.code, down.message, turn_id)
            else:
                log.exception("%s could not %s (%s)", subject, doing, key)
                last = error_frame("internal_error", f"The {subject} could not {doing}.", turn_id)
        finally:
            await handle.release()
            if last is not None:
                await send(last)
