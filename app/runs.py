"""Test runs for the service (DESIGN §5c): resolve, run, clear of credentials, store, read.

:class:`RunService` is the one way the service test-runs a workflow: ``POST
/v1/workflows/{id}/runs``, the chat socket's ``run`` frame and the planner's
``test_run`` tool (through :class:`TurnRuns`, the turn's ``TurnRuntime.test_runs``)
all come here. The run itself happens in a :class:`TestRunner` (OpenFn's runtime in a
node subprocess, ``agents.testrun``), never on the event loop; at most
``runs_per_worker`` run at once in a worker, and a run that finds no free slot within
``run_queue_wait_s`` is refused as ``busy``.

Credentials: a request's ``configuration`` reaches the runner and nothing else; the
finished run is cleared of it before anything stores, returns, streams or logs it
(:mod:`app.run_credentials`). The runner and the admission policy are built from the
settings in :mod:`app.run_config`. Their public names are importable from here too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import traceback
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from agents.api import ProgressCallback, RunProgressEvent, TestRunner
from app.auth import Principal
from app.errors import ConflictError, NotFoundError
from app.offload import off_loop
from app.run_config import RunPolicy, build_runner
from app.run_credentials import (
    MASK,
    credential_values,
    given_credentials,
    masked,
    without_credentials,
)
from app.store import SessionRecord, Store
from app.ws.protocol import (
    RunCompletedFrame,
    RunFrame,
    RunProgressFrame,
    ServerFrame,
    error_frame,
)
from tools.document import WorkflowDocument
from tools.document.yaml_io import DEFAULT_MAX_BYTES
from tools.errors import PlanwrightError, ToolInputError
from tools.testrun import RunRequest, TestRun

__all__ = [
    "FIX_INPUT_CHARS",
    "MASK",
    "OpenDraft",
    "OpenDrafts",
    "RunFailedError",
    "RunPolicy",
    "RunService",
    "RunsBusyError",
    "TurnRuns",
    "build_runner",
    "credential_values",
    "failure_words",
    "given_credentials",
    "masked",
    "without_credentials",
]

log = logging.getLogger(__name__)

Send = Callable[[ServerFrame], Awaitable[None]]

FIX_INPUT_CHARS = 4000
"""How much of a failed step's input JSON "fix it" hands the planner."""
FIX_ERROR_CHARS = 2000


class RunsBusyError(ConflictError):
    """Every test-run slot of this worker stayed taken for ``run_queue_wait_s``."""

    code = "busy"


class RunFailedError(PlanwrightError):
    """The runner failed in a way that says nothing about the workflow (logged)."""

    code = "run_failed"


@dataclass(frozen=True)
class OpenDraft:
    """A session's open review-mode proposal, as a ``run`` frame runs it (DESIGN §5c)."""

    turn_id: str
    """The turn paused on the proposal (the run is stored with it, as its own
    ``test_run`` calls are)."""
    yaml: str
    """The proposed draft."""
    base_version: int
    """The version the draft was made from."""


class OpenDrafts(Protocol):
    """Where the service finds a session's open proposal (the turn service)."""

    async def open_draft(self, session_id: str) -> OpenDraft | None: ...


class RunService:
    """Test runs of stored workflows; see the module docstring."""

    def __init__(
        self,
        *,
        store: Store,
        runner: TestRunner,
        policy: RunPolicy | None = None,
        max_yaml_bytes: int = DEFAULT_MAX_BYTES,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    ) -> None:
        self.store, self.runner = store, runner
        self.policy = policy or RunPolicy()
        self.max_yaml_bytes = max_yaml_bytes
        self.new_id = new_id
        self._slots = asyncio.Semaphore(self.policy.concurrency)
        self.drafts: OpenDrafts | None = None
        """Set by the service once the turn service exists (``app.services``): a ``run``
        frame on a session with an open proposal runs its draft."""

    # -- running ---------------------------------------------------------------------

    async def run(
        self,
        workflow_id: str,
        request: RunRequest,
        *,
        author: str | None,
        session_id: str | None = None,
        turn_id: str | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> TestRun:
        """Run ``workflow_id`` at ``request.version`` (else its current version) and store
        the run. :class:`NotFoundError` for an unknown workflow or version."""
        workflow = await self.store.get_workflow(workflow_id)
        if workflow is None:
            raise NotFoundError(f"There is no workflow {workflow_id!r}.")
        yaml, version = workflow.yaml, workflow.version
        if request.version is not None and request.version != workflow.version:
            found = await self.store.get_version(workflow_id, request.version)
            if found is None or found.yaml is None:
                raise NotFoundError(f"Workflow {workflow_id!r} has no version {request.version}.")
            yaml, version = found.yaml, request.version
        return await self.run_yaml(
            workflow_id,
            yaml,
            version,
            request,
            author=author,
            session_id=session_id,
            turn_id=turn_id,
            on_progress=on_progress,
        )

    async def run_yaml(
        self,
        workflow_id: str,
        yaml: str,
        version: int,
        request: RunRequest,
        *,
        author: str | None,
        session_id: str | None = None,
        turn_id: str | None = None,
        on_progress: ProgressCallback | None = None,
        draft: bool = False,
    ) -> TestRun:
        """Run the document ``yaml`` (``workflow_id`` at ``version``, or with ``draft`` a
        review-mode draft made from it) and store the run with where it came from; the
        stored run is returned."""
        timeout = request.timeout_s if request.timeout_s is not None else self.policy.timeout_s
        if timeout > self.policy.max_timeout_s:
            raise ToolInputError(
                f"A test run may take at most {self.policy.max_timeout_s:g} s here.",
                code="timeout_too_long",
            )
        request = request.model_copy(update={"version": version, "timeout_s": timeout})
        credentials = given_credentials(request)
        secrets = credential_values(credentials)
        run_id = self.new_id()
        # Parsing a large document takes the loop for a while: done in the thread pool.
        doc = await off_loop(WorkflowDocument.from_yaml, yaml, max_bytes=self.max_yaml_bytes)
        async with self._slot():
            try:
                run = await self.runner.run(
                    doc,
                    request,
                    run_id=run_id,
                    on_progress=on_progress,
                    workflow_id=workflow_id,
                    version=version,
                )
            except PlanwrightError as exc:  # its words may quote what the runtime printed
                exc.message = masked(exc.message, secrets)
                exc.args = (exc.message,)
                raise
            except Exception as exc:
                details = "".join(traceback.format_exception(exc))
                log.error("test run %s failed in the runner: %s", run_id, masked(details, secrets))
                raise RunFailedError("The test run could not be completed here.") from None
        # A run may report megabytes (every step's input, output and logs): walked off the loop.
        run = await off_loop(without_credentials, run, credentials)
        run = run.model_copy(
            update={
                "run_id": run_id,
                "workflow_id": workflow_id,
                "version": version,
                "created_by": author,
                "draft": draft,
            }
        )
        record = await self.store.save_test_run(run, session_id=session_id, turn_id=turn_id)
        log.info("test run %s of %s v%d: %s", run_id, workflow_id, version, run.status)
        return record.run

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        """One of the worker's run slots, waiting at most ``queue_wait_s`` for it."""
        wait = self.policy.queue_wait_s
        if self._slots.locked() and wait <= 0:
            raise _busy()
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout=wait)
        except TimeoutError:
            raise _busy() from None
        try:
            yield
        finally:
            self._slots.release()

    # -- reading ---------------------------------------------------------------------

    async def get(self, run_id: str) -> TestRun:
        record = await self.store.get_test_run(run_id)
        if record is None:
            raise NotFoundError(f"There is no test run {run_id!r}.")
        return record.run

    async def list(self, workflow_id: str, *, limit: int | None = None) -> list[TestRun]:
        """The workflow's runs, newest first, at most ``limit`` (bounded by the setting)."""
        if await self.store.get_workflow(workflow_id) is None:
            raise NotFoundError(f"There is no workflow {workflow_id!r}.")
        bound = min(limit or self.policy.list_limit, self.policy.list_limit)
        return [r.run for r in await self.store.list_test_runs(workflow_id, limit=bound)]

    async def last_failed_run(self, session: SessionRecord) -> str | None:
        """The session's newest run of its workflow in words for errors mode ("fix it"),
        when that run did not succeed: the failed step's name and key, its error and its
        input JSON (bounded); ``None`` when the newest run succeeded or there is none."""
        if session.workflow_id is None:
            return None
        record = await self.store.last_session_run(session.id, session.workflow_id)
        if record is None or record.run.status in ("succeeded", "unsupported"):
            return None
        return failure_words(record.run)

    # -- the chat tool and the socket ------------------------------------------------

    def for_turn(self, session: SessionRecord, principal: Principal) -> TurnRuns:
        """The turn's ``TurnRuntime.test_runs``: runs stored with its session and turn."""
        if session.workflow_id is None:
            raise ConflictError(
                "This is a project session: its turns plan the project.", code="project_session"
            )
        return TurnRuns(self, session.workflow_id, session.id, principal.author)

    async def on_socket(
        self, session: SessionRecord, principal: Principal, frame: RunFrame, send: Send
    ) -> None:
        """A chat socket's ``run`` frame: ``run.progress`` frames, then ``run.completed``;
        any failure is one ``error`` frame (the socket stays open).

        While the session has an open review-mode proposal, a frame without ``version``
        runs the proposed draft (``draft: true``, at the proposal's base version, stored
        with the proposal's turn, as that turn's own ``test_run`` calls are), so what is
        proposed can be watched on a sample before it is accepted; a ``version`` runs
        that version."""

        async def progress(event: RunProgressEvent) -> None:
            await send(RunProgressFrame(**event.model_dump()))

        try:
            if session.workflow_id is None:
                raise ConflictError(
                    "A project session has no workflow to run; open one on a workflow.",
                    code="project_session",
                )
            fields = frame.model_dump(exclude={"type"}, exclude_none=True)
            request = RunRequest.model_validate(fields)
            draft = None
            if frame.version is None and self.drafts is not None:
                draft = await self.drafts.open_draft(session.id)
            if draft is not None:
                run = await self.run_yaml(
                    session.workflow_id,
                    draft.yaml,
                    draft.base_version,
                    request,
                    author=principal.author,
                    session_id=session.id,
                    turn_id=draft.turn_id,
                    on_progress=progress,
                    draft=True,
                )
            else:
                run = await self.run(
                    session.workflow_id,
                    request,
                    author=principal.author,
                    session_id=session.id,
                    on_progress=progress,
                )
        except asyncio.CancelledError:  # a ``cancel`` frame: the runner stopped it
            await send(error_frame("cancelled", "The test run was cancelled; nothing was kept."))
            raise
        except PlanwrightError as exc:
            await send(error_frame(exc.code, exc.message))
            return
        except Exception:
            log.exception("the test run of session %s failed", session.id)
            await send(error_frame("internal_error", "The test run failed unexpectedly."))
            return
        await send(RunCompletedFrame(run=run))


@dataclass
class TurnRuns:
    """A turn's test runs (``agents.runtime.TurnTestRuns``): the turn's document at its
    version, stored with the turn's session, turn id and author."""

    service: RunService
    workflow_id: str
    session_id: str | None
    author: str | None

    async def run(
        self,
        *,
        yaml: str,
        version: int,
        request: RunRequest,
        turn_id: str,
        on_progress: ProgressCallback | None = None,
        draft: bool = False,
    ) -> TestRun:
        return await self.service.run_yaml(
            self.workflow_id,
            yaml,
            version,
            request,
            author=self.author,
            session_id=self.session_id,
            turn_id=turn_id,
            on_progress=on_progress,
            draft=draft,
        )


def _busy() -> RunsBusyError:
    return RunsBusyError("Every test-run slot here is taken; try again in a moment.")


# -- "fix it" -----------------------------------------------------------------------


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def failure_words(run: TestRun) -> str:
    """A failed (or timed-out) run as errors mode takes it: the failed step's name and key,
    its error and its input JSON, bounded."""
    head = f"Test run {run.run_id} of version {run.version} {run.status.replace('_', ' ')}"
    step = run.failed_step
    if step is None:
        return f"{head}: {_cut(run.error or run.summary or 'no step failed', FIX_ERROR_CHARS)}"
    given = json.dumps(step.input, ensure_ascii=False, indent=1, default=str)
    return (
        f"{head} at step {step.name!r} (key {step.key}).\n"
        f"Error: {_cut(step.error or 'no message', FIX_ERROR_CHARS)}\n"
        f"Its input:\n{_cut(given, FIX_INPUT_CHARS)}"
    )
