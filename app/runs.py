"""Test runs for the service (DESIGN §5c): resolve, run, clear of credentials, store, read.

:class:`RunService` is the one way the service test-runs a workflow: ``POST
/v1/workflows/{id}/runs``, the chat socket's ``run`` frame and the planner's
``test_run`` tool (through :class:`TurnRuns`, the turn's ``TurnRuntime.test_runs``)
all come here. The run itself happens in a :class:`TestRunner` (OpenFn's runtime in a
node subprocess, ``agents.testrun``), never on the event loop; at most
``runs_per_worker`` run at once in a worker, and a run that finds no free slot within
``run_queue_wait_s`` is refused as ``busy``.

Credentials: a request's ``configuration`` reaches the runner and nothing else. The
finished run is cleared of it before anything stores, returns, streams or logs it
(:func:`without_credentials`): every ``configuration`` key in a state is dropped and
each credential value is replaced by ``***`` wherever it shows (a step that logged
its password, an error that quoted it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import traceback
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from agents.events import RunProgressEvent
from agents.testrun import DEFAULT_CACHE_DIR, LocalRunner, RunLimits
from agents.testrun.install import OpenFnRuntimeUnavailable
from app.auth import Principal
from app.errors import ConflictError, NotFoundError
from app.offload import off_loop
from app.settings import Settings
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

log = logging.getLogger(__name__)

Progress = Callable[[RunProgressEvent], Awaitable[None]]
Send = Callable[[ServerFrame], Awaitable[None]]

MASK = "***"
"""What a credential value is replaced with in a stored or returned run."""
MIN_SECRET_CHARS = 3
"""Credential values shorter than this are not searched for in texts (every ``a`` of
a log would go); their ``configuration`` keys are still dropped."""
ADDRESS_KEYS = frozenset({"baseUrl", "hostUrl", "instanceUrl", "url", "apiVersion"})
"""Configuration fields that say where a service is, not how to get in: kept in the
run's request URLs unless they carry a user or password (``https://u:p@host``)."""
FIX_INPUT_CHARS = 4000
"""How much of a failed step's input JSON "fix it" hands the planner."""
FIX_ERROR_CHARS = 2000


class RunsBusyError(ConflictError):
    """Every test-run slot of this worker stayed taken for ``run_queue_wait_s``."""

    code = "busy"


class RunFailedError(PlanwrightError):
    """The runner failed in a way that says nothing about the workflow (logged)."""

    code = "run_failed"


class TestRunner(Protocol):
    """What the service needs of ``agents.testrun.TestRunner`` (``LocalRunner``): run a
    parsed document on a sample, reporting each step's start and end."""

    async def run(
        self,
        workflow: WorkflowDocument,
        request: RunRequest,
        *,
        run_id: str,
        on_progress: Progress | None = None,
        workflow_id: str | None = None,
        version: int | None = None,
    ) -> TestRun: ...


class UnavailableRunner:
    """A runner for where OpenFn's runtime cannot run: every run is refused, saying why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def run(
        self,
        workflow: WorkflowDocument,
        request: RunRequest,
        *,
        run_id: str,
        on_progress: Progress | None = None,
        workflow_id: str | None = None,
        version: int | None = None,
    ) -> TestRun:
        raise OpenFnRuntimeUnavailable(self.reason)


def build_runner(settings: Settings) -> TestRunner:
    """The embedded runner (``agents.testrun.LocalRunner``: a node subprocess per run) with
    the settings' limits. It checks node and the installed packages on its first run, so a
    machine without them still serves everything else and answers runs with
    ``openfn_runtime_unavailable``."""
    limits = RunLimits(
        timeout_s=settings.run_timeout_s,
        memory_mb=settings.run_memory_mb,
        step_bytes=settings.run_output_bytes,
        total_bytes=settings.run_total_output_bytes,
    )
    return LocalRunner(limits, settings.run_runtime_dir or DEFAULT_CACHE_DIR)


@dataclass(frozen=True)
class RunPolicy:
    """How the service admits test runs (``PLANWRIGHT_RUN_*``); the runner's own limits
    (memory, output) are ``agents.testrun.RunLimits``."""

    timeout_s: float = 20.0
    """Wall-clock limit of a run whose request gives none."""
    max_timeout_s: float = 120.0
    """Largest ``timeout_s`` a request may ask for."""
    concurrency: int = 2
    """Runs one worker runs at once."""
    queue_wait_s: float = 5.0
    """How long a run waits for a free slot before it is refused as ``busy``."""
    list_limit: int = 50
    """Most runs one listing returns."""

    @classmethod
    def from_settings(cls, settings: Settings) -> RunPolicy:
        return cls(
            timeout_s=settings.run_timeout_s,
            max_timeout_s=settings.run_max_timeout_s,
            concurrency=settings.runs_per_worker,
            queue_wait_s=settings.run_queue_wait_s,
            list_limit=settings.run_list_limit,
        )


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

    # -- running ---------------------------------------------------------------------

    async def run(
        self,
        workflow_id: str,
        request: RunRequest,
        *,
        author: str | None,
        session_id: str | None = None,
        turn_id: str | None = None,
        on_progress: Progress | None = None,
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
        on_progress: Progress | None = None,
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
        any failure is one ``error`` frame (the socket stays open)."""

        async def progress(event: RunProgressEvent) -> None:
            await send(RunProgressFrame(**event.model_dump()))

        try:
            if session.workflow_id is None:
                raise ConflictError(
                    "A project session has no workflow to run; open one on a workflow.",
                    code="project_session",
                )
            fields = frame.model_dump(exclude={"type"}, exclude_none=True)
            run = await self.run(
                session.workflow_id,
                RunRequest.model_validate(fields),
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
        on_progress: Progress | None = None,
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


# -- credentials --------------------------------------------------------------------


def _leaves(value: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, key)
    else:
        yield key, value


def given_credentials(request: RunRequest) -> dict[str, Any]:
    """A request's credentials: its ``configuration``, and a ``configuration`` in its input
    state (the runner takes that one as credentials too)."""
    inline = request.input.get("configuration")
    return {**(inline if isinstance(inline, dict) else {}), **(request.configuration or {})}


def credential_values(configuration: dict[str, Any] | None) -> list[str]:
    """The texts of ``configuration`` to keep out of a run, longest first (a value that
    holds another is replaced whole)."""
    found: set[str] = set()
    for key, value in _leaves(configuration or {}):
        if isinstance(value, bool) or value is None:
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        if key in ADDRESS_KEYS and "@" not in text:
            continue
        if len(text) >= MIN_SECRET_CHARS:
            found.add(text)
    return sorted(found, key=len, reverse=True)


def masked(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _cleared(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, dict):
        return {
            masked(str(k), secrets): _cleared(v, secrets)
            for k, v in value.items()
            if k != "configuration"
        }
    if isinstance(value, list):
        return [_cleared(v, secrets) for v in value]
    if isinstance(value, str):
        # A lone surrogate (JSON can spell one) cannot be encoded for any database or response.
        return masked(_LONE_SURROGATE.sub("\ufffd", value), secrets)
    if secrets and isinstance(value, (int, float)) and not isinstance(value, bool):
        return MASK if json.dumps(value) in secrets else value
    return value


def without_credentials(run: TestRun, configuration: dict[str, Any] | None) -> TestRun:
    """``run`` with no ``configuration`` key in any state and every credential value of
    ``configuration`` replaced by ``***`` in every field; lone surrogates replaced."""
    data = _cleared(run.model_dump(mode="json"), credential_values(configuration))
    return TestRun.model_validate(data)


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
