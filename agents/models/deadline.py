"""How long a turn may wait on its model: the turn deadline, and the cap on one wait.

A turn's model calls are the only waits that can run long (a slow stream, a
rate limit whose ``retry-after`` asks for minutes). Two limits bound them:

* :class:`Deadline`: the whole run of a turn (from its start, or from the
  answer that resumed it, to its end or its next pause). Every model call runs
  under it (:class:`DeadlineModel`); a call that would end after it is stopped,
  and a call made after it is refused, with :class:`TurnDeadlineError`.
* :class:`RetryWaitCap`: SDK middleware run on every HTTP attempt. A retryable
  answer (429, 529 ...) whose ``retry-after`` is longer than the configured cap,
  or than what is left of the turn's deadline, fails the call at once with
  :class:`RetryWaitTooLongError` (or :class:`TurnDeadlineError`) instead of the
  SDK sleeping it out.

Nothing of a stopped call is used: tool calls only run once a reply is whole,
and each change is committed before the next call, so a turn stopped here keeps
every change it committed and nothing else.
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.models.base import ChatModel, ModelRequest, ModelResponse, ModelUnavailableError
from tools.errors import PlanwrightError

if TYPE_CHECKING:
    from anthropic import APIRequest, AsyncAPIResponse, AsyncCallNext

__all__ = [
    "Deadline",
    "DeadlineModel",
    "RetryWaitCap",
    "RetryWaitTooLongError",
    "TurnDeadlineError",
    "current_deadline",
]

Clock = Callable[[], float]


class TurnDeadlineError(PlanwrightError):
    """The turn ran out of time: its deadline passed, or a wait would pass it."""

    code = "turn_deadline"


class RetryWaitTooLongError(ModelUnavailableError):
    """The API asked to wait (``retry-after``) longer than the configured cap."""

    code = "retry_after_too_long"


@dataclass
class Deadline:
    """An absolute end on a monotonic ``clock``; ``seconds=None`` never ends."""

    seconds: float | None
    clock: Clock = time.monotonic
    started: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def remaining(self) -> float | None:
        """Seconds left (never below 0), or ``None`` without a deadline."""
        if self.seconds is None:
            return None
        return max(0.0, self.started + self.seconds - self.clock())

    def expired_error(self, waiting_for: str = "") -> TurnDeadlineError:
        why = f" ({waiting_for})" if waiting_for else ""
        return TurnDeadlineError(
            f"The turn ran past its time limit of {self.seconds:g} s{why} and was stopped; "
            "the changes it saved before that are kept",
            deadline_s=self.seconds,
        )

    def check(self) -> None:
        """Raise :class:`TurnDeadlineError` once the deadline has passed."""
        left = self.remaining()
        if left is not None and left <= 0:
            raise self.expired_error()


_CURRENT: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "planwright_deadline", default=None
)


def current_deadline() -> Deadline | None:
    """The deadline of the model call running in this task (read by :class:`RetryWaitCap`)."""
    return _CURRENT.get()


class DeadlineModel:
    """A :class:`ChatModel` whose calls end by ``deadline``.

    A call made after the deadline is refused; one still running when it passes is
    cancelled (what its stream had already billed stays on the error, for the usage
    ledger) and raises :class:`TurnDeadlineError`.
    """

    def __init__(self, inner: ChatModel, deadline: Deadline) -> None:
        self.inner, self.deadline = inner, deadline
        self.name = inner.name

    async def create(self, request: ModelRequest, *, on_text: Any = None) -> ModelResponse:
        left = self.deadline.remaining()
        if left is None:
            return await self._call(request, on_text)
        if left <= 0:
            raise self.deadline.expired_error(f"before a {request.role} call")
        try:
            async with asyncio.timeout(left):
                return await self._call(request, on_text)
        except TimeoutError as exc:
            error = self.deadline.expired_error(f"waiting for the {request.role} model")
            cancelled = exc.__cause__  # the cancel of the call: it carries what was spent
            for attr in ("spent_usage", "spent_model"):
                if hasattr(cancelled, attr):
                    setattr(error, attr, getattr(cancelled, attr))
            raise error from exc

    async def _call(self, request: ModelRequest, on_text: Any) -> ModelResponse:
        token = _CURRENT.set(self.deadline)
        try:
            return await self.inner.create(request, on_text=on_text)
        finally:
            _CURRENT.reset(token)


# What the SDK retries (anthropic._base_client: 408, 409, 429, 5xx), unless the server
# says otherwise with x-should-retry.
_RETRIED = frozenset({408, 409, 429})


def retry_after_s(headers: Any) -> float | None:
    """The wait a response asks for, read as the SDK reads it (``retry-after-ms``,
    then ``retry-after`` as seconds or an HTTP date)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            if name == "retry-after":
                parsed = email.utils.parsedate_tz(value)
                if parsed is not None:
                    return float(email.utils.mktime_tz(parsed) - time.time())
    return None


class RetryWaitCap:
    """SDK middleware: a retryable answer that asks for a longer wait than ``max_wait_s``
    (or than the running call's deadline leaves) fails the call instead of waiting.

    The SDK honours any ``retry-after`` however long; a middleware's exception is not
    retried, so raising here ends the call at once."""

    def __init__(self, max_wait_s: float) -> None:
        self.max_wait_s = max_wait_s

    async def __call__(
        self, request: APIRequest, call_next: AsyncCallNext
    ) -> AsyncAPIResponse[Any]:
        response = await call_next(request)
        status = response.status_code
        should = response.headers.get("x-should-retry")
        retried = should == "true" or (should != "false" and (status in _RETRIED or status >= 500))
        wait = retry_after_s(response.headers) if retried else None
        if wait is None or wait <= 0:
            return response
        deadline = current_deadline()
        left = deadline.remaining() if deadline is not None else None
        too_long = wait > self.max_wait_s
        if not too_long and (deadline is None or left is None or wait < left):
            return response
        await response.close()
        if too_long:
            raise RetryWaitTooLongError(
                f"The model API is busy ({status}) and asked to wait {wait:g} s before "
                f"trying again, more than the {self.max_wait_s:g} s allowed "
                "(PLANWRIGHT_MODEL_MAX_WAIT_S); try again later",
                status=status,
                retry_after_s=wait,
                max_wait_s=self.max_wait_s,
                request_id=response.headers.get("request-id"),
            )
        assert deadline is not None
        raise deadline.expired_error(f"the model API asked to wait {wait:g} s, {left:.0f} s left")
