"""The embedded test runner: one node subprocess per run (``node/run.mjs``).

The process gets the run on stdin (the only place credential values travel),
writes one JSON event a line on a pipe of its own (``--events-fd``), and is
bounded three ways: wall clock (the whole process group is killed), memory
(``--max-old-space-size`` and ``RLIMIT_DATA``) and output (per value in node,
all events here). Its environment is empty but ``PATH``: the service's secrets
never reach it. Where the kernel allows an unprivileged network namespace
(``unshare -rn``) the process runs in one with no interfaces up, under the
in-process guard and request interception of ``run.mjs``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import shutil
import signal
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agents.events import RunProgressEvent
from agents.testrun.install import (
    DEFAULT_CACHE_DIR,
    OpenFnRuntimeUnavailable,
    ensure_installed,
    is_ready,
)
from agents.testrun.limits import NATIVE_HEADROOM_MB, RunLimits
from agents.testrun.report import (
    Outcome,
    RunPlan,
    build_run,
    mask,
    plan_from_cli,
    plan_from_document,
    secret_values,
)
from tools.document import WorkflowDocument
from tools.errors import DocumentError
from tools.testrun import RunRequest, TestRun, UnsupportedStep

log = logging.getLogger(__name__)

ProgressCallback = Callable[[RunProgressEvent], Awaitable[None]]
WorkflowSource = str | WorkflowDocument | Mapping[str, Any]
"""Planwright YAML text, a parsed document, or a CLI ``workflow.json`` object."""
NetworkMode = Literal["none", "loopback"]

_STDERR_KEEP = 64 * 1024
_DRAIN_AFTER_KILL_S = 2.0


@dataclass
class RunDetail:
    """A run and what only the evals read: node's events (with request bodies when asked)."""

    run: TestRun
    events: list[dict[str, Any]] = field(default_factory=list)
    plan: RunPlan | None = None

    @property
    def request_bodies(self) -> list[Any]:
        """Each ``request`` event's body (``record_bodies``), in order."""
        return [e.get("body") for e in self.events if e.get("ev") == "request"]


def initial_state(request: RunRequest) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The run's state and configuration: a bare input object is taken as ``data``; a
    ``configuration`` inside the input is treated as the request's (masked the same)."""
    given = dict(request.input)
    state = given if "data" in given else {"data": given}
    configuration = dict(request.configuration) if request.configuration else None
    inline = state.pop("configuration", None)
    if isinstance(inline, Mapping):
        configuration = {**inline, **(configuration or {})}
    return state, configuration


_UNSHARE: list[str] | None = None
_UNSHARE_CHECKED = False


async def _network_namespace() -> list[str]:
    """``["unshare", "-rn", "--"]`` when an unprivileged network namespace can be made here."""
    global _UNSHARE, _UNSHARE_CHECKED
    if not _UNSHARE_CHECKED:
        found = shutil.which("unshare")
        if found is not None:
            try:
                probe = await asyncio.create_subprocess_exec(
                    found,
                    "-rn",
                    "--",
                    "true",
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )
                if await asyncio.wait_for(probe.wait(), 5) == 0:
                    _UNSHARE = [found, "-rn", "--"]
            except (OSError, TimeoutError):
                _UNSHARE = None
        _UNSHARE_CHECKED = True
    return list(_UNSHARE or [])


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class LocalRunner:
    """Runs a workflow in the pinned ``@openfn/runtime`` in a local node subprocess.

    The embedded default of :class:`agents.testrun.TestRunner`; an OpenFn worker or a
    Lightning instance is the place to grow to (same protocol, a remote ``run``).
    """

    def __init__(
        self,
        limits: RunLimits | None = None,
        cache_dir: Path = DEFAULT_CACHE_DIR,
        *,
        install: bool = False,
        isolate_network: bool = True,
    ) -> None:
        self.limits = limits or RunLimits()
        """Defaults for every run (a request's ``timeout_s`` overrides the time limit)."""
        self.cache_dir = cache_dir
        """Where the pinned npm packages and the node scripts are installed."""
        self.install = install
        """Install them (``npm ci``) on first use when missing; the service installs at
        start-up instead (``make serve``, the Dockerfile) and never runs npm per run."""
        self.isolate_network = isolate_network
        """Run node in a network namespace of its own when the kernel allows it."""
        self._ready = False

    async def _root(self) -> Path:
        if self._ready:
            return self.cache_dir.resolve()
        if shutil.which("node") is None:
            raise OpenFnRuntimeUnavailable(
                "Test runs need Node.js >= 20 on this machine (`node` is not on PATH)."
            )
        if self.install:
            await asyncio.to_thread(ensure_installed, self.cache_dir)
        elif not await asyncio.to_thread(is_ready, self.cache_dir):
            raise OpenFnRuntimeUnavailable(
                f"OpenFn's runtime is not installed in {self.cache_dir}: run "
                "`python -m agents.testrun.install` (`make serve` does)."
            )
        self._ready = True
        return self.cache_dir.resolve()

    async def run(
        self,
        workflow: WorkflowSource,
        request: RunRequest,
        *,
        run_id: str,
        on_progress: ProgressCallback | None = None,
        workflow_id: str | None = None,
        version: int | None = None,
    ) -> TestRun:
        """Run ``workflow`` on ``request``'s sample; see :class:`agents.testrun.TestRunner`."""
        detail = await self.execute(
            workflow,
            request,
            run_id=run_id,
            on_progress=on_progress,
            workflow_id=workflow_id,
            version=version,
        )
        return detail.run

    async def execute(
        self,
        workflow: WorkflowSource,
        request: RunRequest,
        *,
        run_id: str,
        on_progress: ProgressCallback | None = None,
        workflow_id: str | None = None,
        version: int | None = None,
        network: NetworkMode = "none",
        inject_failures: Mapping[str, str] | None = None,
        record_bodies: bool = False,
    ) -> RunDetail:
        """:meth:`run` with what only the evals and the older harness use: ``network``
        ``"loopback"`` (real HTTP to servers on this machine, no samples),
        ``inject_failures`` (job key -> message: that step throws after its code) and
        ``record_bodies`` (request bodies in ``RunDetail.events``). The service never
        passes them (``TestRunner.run`` has none of them)."""
        started = time.monotonic()
        try:
            plan = self._plan(workflow)
        except DocumentError as exc:
            run = TestRun(
                run_id=run_id,
                workflow_id=workflow_id,
                version=version,
                status="unsupported",
                unsupported=[
                    UnsupportedStep(key=str(exc.details.get("field") or ""), reason=exc.message)
                ]
                if exc.details.get("field")
                else [],
                error=f"This workflow cannot be exported for OpenFn: {exc.message}",
                summary=f"Could not run it: {exc.message}",
            )
            return RunDetail(run=run)
        root = await self._root()
        limits = self.limits.for_request(request.timeout_s)
        state, configuration = initial_state(request)
        id_of = {key: step_id for step_id, key in plan.key_of.items()}
        payload = {
            "plan": plan.cli,
            "state": state,
            "configuration": configuration,
            "network": network,
            "responses": [r.model_dump(mode="json") for r in request.responses],
            "limits": {
                "step_bytes": limits.step_bytes,
                "timeout_ms": int(limits.timeout_s * 1000),
                "state_mb": limits.state_mb,
            },
            "record_bodies": record_bodies,
            "inject_failures": {id_of.get(k, k): m for k, m in (inject_failures or {}).items()},
        }
        events, outcome = await self._spawn(
            root, payload, limits, network, run_id, plan, on_progress
        )
        outcome.duration_ms = int((time.monotonic() - started) * 1000)
        secrets = secret_values(configuration)
        run = build_run(
            run_id,
            plan,
            events,
            outcome,
            secrets=secrets,
            workflow_id=workflow_id,
            version=version,
        )
        if secrets:
            events = mask(events, secrets)
        return RunDetail(run=run, events=events, plan=plan)

    @staticmethod
    def _plan(workflow: WorkflowSource) -> RunPlan:
        if isinstance(workflow, WorkflowDocument):
            return plan_from_document(workflow)
        if isinstance(workflow, str):
            return plan_from_document(WorkflowDocument.from_yaml(workflow))
        return plan_from_cli(workflow)

    async def _spawn(
        self,
        root: Path,
        payload: dict[str, Any],
        limits: RunLimits,
        network: NetworkMode,
        run_id: str,
        plan: RunPlan,
        on_progress: ProgressCallback | None,
    ) -> tuple[list[dict[str, Any]], Outcome]:
        node = shutil.which("node")
        if node is None:
            raise OpenFnRuntimeUnavailable("`node` is not on PATH: test runs need Node.js >= 20")
        prefix = await _network_namespace() if self.isolate_network and network == "none" else []
        read_fd, write_fd = os.pipe()
        command = [
            *prefix,
            node,
            "--experimental-vm-modules",
            "--no-warnings",
            f"--max-old-space-size={limits.memory_mb}",
            "run.mjs",
            "--events-fd",
            str(write_fd),
        ]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        outcome = Outcome(
            timeout_s=limits.timeout_s,
            total_bytes=limits.total_bytes,
            memory_mb=limits.memory_mb,
        )
        try:
            proc = await asyncio.create_subprocess_exec(
                *command,
                cwd=root,
                env=env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=(write_fd,),
                start_new_session=True,  # its own process group: one kill ends all of it
            )
        except OSError as exc:
            os.close(read_fd)
            raise OpenFnRuntimeUnavailable(f"could not start node: {exc}") from exc
        finally:
            os.close(write_fd)
        data_limit = (limits.memory_mb + NATIVE_HEADROOM_MB) * 1024 * 1024
        with contextlib.suppress(OSError, ValueError):
            resource.prlimit(proc.pid, resource.RLIMIT_DATA, (data_limit, data_limit))

        events: list[dict[str, Any]] = []
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=limits.total_bytes + 1)
        pipe = os.fdopen(read_fd, "rb", buffering=0)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        stderr_task = asyncio.create_task(self._read_stderr(proc))
        seen = 0

        async def pump() -> None:
            nonlocal seen
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(payload).encode())
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await proc.stdin.drain()
            proc.stdin.close()
            while True:
                try:
                    line = await reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    outcome.killed_for = "output"
                    return
                if not line:
                    return
                seen += len(line)
                if seen > limits.total_bytes:
                    outcome.killed_for = "output"
                    return
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(event, dict):
                    continue
                events.append(event)
                await self._progress(event, run_id, plan, on_progress)

        async def drain() -> None:
            nonlocal seen
            while seen <= limits.total_bytes:
                try:
                    line = await reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    return
                if not line:
                    return
                seen += len(line)
                with contextlib.suppress(ValueError):
                    event = json.loads(line)
                    if isinstance(event, dict) and event.get("ev") != "done":
                        events.append(event)

        try:
            try:
                await asyncio.wait_for(pump(), timeout=limits.timeout_s)
            except TimeoutError:
                outcome.killed_for = "timeout"
            if outcome.killed_for is not None:
                _kill_group(proc.pid)
            if outcome.killed_for == "timeout":  # keep what node wrote before it was killed
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(drain(), _DRAIN_AFTER_KILL_S)
            await proc.wait()
        finally:
            if proc.returncode is None:  # cancelled: never leave node running
                _kill_group(proc.pid)
                with contextlib.suppress(ProcessLookupError):
                    await proc.wait()
            transport.close()
        outcome.exit_code = proc.returncode
        with contextlib.suppress(TimeoutError):
            outcome.stderr = await asyncio.wait_for(stderr_task, _DRAIN_AFTER_KILL_S)
        return events, outcome

    @staticmethod
    async def _read_stderr(proc: asyncio.subprocess.Process) -> str:
        assert proc.stderr is not None
        kept = bytearray()
        while chunk := await proc.stderr.read(65536):
            if len(kept) < _STDERR_KEEP:
                kept += chunk[: _STDERR_KEEP - len(kept)]
        return kept.decode("utf-8", "replace")

    @staticmethod
    async def _progress(
        event: dict[str, Any], run_id: str, plan: RunPlan, on_progress: ProgressCallback | None
    ) -> None:
        if on_progress is None or event.get("ev") not in ("step-start", "step-end"):
            return
        status: Literal["started", "succeeded", "failed"]
        if event["ev"] == "step-start":
            status = "started"
        else:
            status = "failed" if event.get("status") == "failed" else "succeeded"
        key = plan.key(str(event.get("id"))) or str(event.get("id"))
        try:
            await on_progress(RunProgressEvent(run_id=run_id, step_key=key, status=status))
        except Exception:  # a gone listener must not stop the run
            log.warning("test run %s: a progress listener failed", run_id, exc_info=True)
