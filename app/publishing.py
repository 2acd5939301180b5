"""The one writer: commit a version of a workflow, then publish it on the bus.

Turns (through :class:`StoreCommitter`), ``PUT`` and revert all go
through :meth:`Publisher.commit_and_publish`, so a persisted version is always
announced as exactly one ``workflow`` event, and nothing is announced that is not
persisted.

Commit and publish are one outcome: once the database has the version, the caller
is told it is committed, whatever the bus does. A publish that fails (Redis down
or unreachable) is kept and retried in the background, in commit order per
workflow, until the bus takes it; meanwhile watchers that reconnect catch up from
the database (:mod:`app.ws.watch`). Only the newest ``MAX_PENDING`` events of a
workflow are kept: a watcher that sees a gap in versions reads a fresh snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from dataclasses import dataclass

from tenacity import AsyncRetrying, retry_if_result, wait_exponential

from agents.api import Commit, workflow_event
from app.bus.base import Event, EventBus
from app.store import Store

log = logging.getLogger(__name__)

PUBLISH_TIMEOUT_S = 2.0
RETRY_FIRST_S = 0.25
RETRY_MAX_S = 5.0
MAX_PENDING = 32


class Publisher:
    """Commits versions and publishes their ``workflow`` events (one per process)."""

    def __init__(
        self,
        store: Store,
        bus: EventBus,
        *,
        publish_timeout_s: float = PUBLISH_TIMEOUT_S,
        retry_first_s: float = RETRY_FIRST_S,
        retry_max_s: float = RETRY_MAX_S,
    ) -> None:
        self.store, self.bus = store, bus
        self.publish_timeout_s = publish_timeout_s
        self.retry_first_s, self.retry_max_s = retry_first_s, retry_max_s
        self._pending: dict[str, deque[Event]] = {}
        """Events the bus has not taken yet, per workflow, oldest first."""
        self._retrying: asyncio.Task[None] | None = None
        """The background task that retries ``_pending`` until it is empty."""

    @property
    def pending(self) -> int:
        """Committed versions not yet published (the bus is or was unreachable)."""
        return sum(len(queue) for queue in self._pending.values())

    async def commit_and_publish(
        self,
        workflow_id: str,
        change: Commit,
        *,
        author: str | None,
        session_id: str | None = None,
    ) -> int:
        """Commit ``change`` as version ``change.base_version + 1`` of the workflow and
        publish its ``workflow`` event; returns the new version.

        Shielded: a cancelled caller (a turn, a dropped request) never leaves a
        persisted version unpublished. Raises only what :meth:`Store.commit_version`
        raises (e.g. :class:`app.errors.VersionConflictError`), in which case nothing
        is published; a failed publish is retried, never raised.
        """

        async def commit_then_publish() -> int:
            version = await self.store.commit_version(
                workflow_id,
                yaml=change.yaml,
                name=change.name,
                expected_version=change.base_version,
                author=author,
                session_id=session_id,
                turn_id=change.turn_id,
                tool=change.tool,
                summary=change.summary,
            )
            event = workflow_event(
                change.yaml,
                version,
                change.changes,
                workflow_id=workflow_id,
                turn_id=change.turn_id,
            ).wire()
            await self.publish(workflow_id, event)
            return version

        return await asyncio.shield(commit_then_publish())

    async def publish(self, workflow_id: str, event: Event) -> None:
        """Publish now, or (behind earlier events still waiting, or when the bus
        fails) keep it for the background retry. Never raises for the bus."""
        queue = self._pending.get(workflow_id)
        if queue is None:
            try:
                await asyncio.wait_for(self.bus.publish(workflow_id, event), self.publish_timeout_s)
                return
            except Exception as exc:  # the bus is down: the version is committed anyway
                log.warning(
                    "publishing version %s of %s failed (%r); will retry",
                    event.get("version"),
                    workflow_id,
                    exc,
                )
            queue = self._pending.setdefault(workflow_id, deque(maxlen=MAX_PENDING))
        queue.append(event)
        if self._retrying is None or self._retrying.done():
            self._retrying = asyncio.create_task(self._retry(), name="planwright-republish")

    async def _retry(self) -> None:
        """Flush after ``retry_first_s``, the wait doubling (up to ``retry_max_s``) while
        nothing goes out and starting again from ``retry_first_s`` once something does."""
        while self._pending:
            await asyncio.sleep(self.retry_first_s)
            await AsyncRetrying(
                wait=wait_exponential(multiplier=2 * self.retry_first_s, max=self.retry_max_s),
                retry=retry_if_result(lambda progressed: not progressed and bool(self._pending)),
            )(self.flush)

    async def flush(self) -> bool:
        """Try every waiting event once, in order per workflow; True if any went out."""
        progressed = False
        for workflow_id in list(self._pending):
            queue = self._pending[workflow_id]
            while queue:
                try:
                    await asyncio.wait_for(
                        self.bus.publish(workflow_id, queue[0]), self.publish_timeout_s
                    )
                except Exception as exc:
                    log.debug("republishing to %s failed: %r", workflow_id, exc)
                    break
                queue.popleft()
                progressed = True
            if not queue:
                del self._pending[workflow_id]
                log.info("caught up publishing %s", workflow_id)
        return progressed

    async def close(self) -> None:
        """Stop retrying (one last try first); whatever is left, watchers read from
        the database when they reconnect."""
        task, self._retrying = self._retrying, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._pending:
            await self.flush()
        if self._pending:
            log.warning("%d committed versions were never published", self.pending)


@dataclass
class StoreCommitter:
    """A turn's committer (:class:`agents.runtime.TurnRuntime`): its versions go
    through :meth:`Publisher.commit_and_publish` as the session's author."""

    publisher: Publisher
    workflow_id: str
    session_id: str
    author: str

    async def commit(self, change: Commit) -> int:
        return await self.publisher.commit_and_publish(
            self.workflow_id, change, author=self.author, session_id=self.session_id
        )
