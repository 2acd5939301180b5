"""The embedded test runner: one node subprocess per run (``node/run.mjs``).

:class:`LocalRunner` turns a workflow and a run request into what node is given (the
plan in OpenFn's ``cli`` form, the initial state, the sample responses, the limits),
runs it in :func:`agents.testrun.process.run_node` (the process: bounded in time,
memory and output, isolated from the network and the service's environment, confined to
the runtime's files by node's permission model), reports
each step's start and end as it comes, and makes the :class:`tools.testrun.TestRun`
of node's events (:mod:`agents.testrun.report`), credential values masked.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import logging
import shutil
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
from agents.testrun.limits import RunLimits
from agents.testrun.process import run_node
from agents.testrun.report import (
    Outcome,
    RunPlan,
    build_run,
    plan_from_cli,
    plan_from_document,
)
from agents.testrun.secrets import mask, secret_values
from tools.document import WorkflowDocument
from tools.errors import DocumentError
from tools.testrun import RunRequest, TestRun, UnsupportedStep

log = logging.getLogger(__name__)

ProgressCallback = Callable[[RunProgressEvent], Awaitable[None]]
WorkflowSource = str | WorkflowDocument | Mapping[str, Any]
"""Planwright YAML text, a parsed document, or a CLI ``workflow.json`` object."""
NetworkMode = Literal["none", "loopback"]


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


def initial_state(request: RunRequest) -> dict[str, Any]:
    """The run's initial state: a bare input object is taken as ``data``. A
    ``configuration`` in it stays there, as in ``openfn -s state.json``: the runtime
    merges it into the first step's configuration only (its values are masked)."""
    given = dict(request.input)
    return given if "data" in given else {"data": given}


def step_credentials(cli: Mapping[str, Any]) -> list[str]:
    """The credential names the plan's steps give as their ``configuration``, in order."""
    workflow = cli.get("workflow", cli) if isinstance(cli.get("workflow"), Mapping) else cli
    names: list[str] = []
    for step in workflow.get("steps") or []:
        given = step.get("configuration") if isinstance(step, Mapping) else None
        if isinstance(given, Mapping):
            given = given.get("$CREDENTIALS$")
        if isinstance(given, str) and not given.endswith(".json") and given not in names:
            names.append(given)
    return names


def credential_map(request: RunRequest, cli: Mapping[str, Any]) -> dict[str, Any]:
    """The run's credential map (name -> configuration), as ``openfn --creds`` reads it:
    ``credentials``, and the older single ``configuration`` as the value of every
    credential a step names that ``credentials`` does not give. A step that names no
    credential gets nothing from either."""
    creds: dict[str, Any] = {k: dict(v) for k, v in (request.credentials or {}).items()}
    if request.configuration:
        for name in step_credentials(cli):
            creds.setdefault(name, dict(request.configuration))
    return creds


def with_credential(plan: RunPlan, name: str) -> RunPlan:
    """``plan`` with every job step that names no credential naming ``name``."""
    cli = copy.deepcopy(plan.cli)
    workflow = cli["workflow"] if isinstance(cli.get("workflow"), Mapping) else cli
    for step in workflow.get("steps") or []:
        if isinstance(step.get("expression"), str) and step.get("configuration") is None:
            step["configuration"] = name
    return dataclasses.replace(plan, cli=cli)


def given_secrets(request: RunRequest) -> dict[str, Any]:
    """Everything the request carries that a report must not: its credentials, its
    ``configuration`` and a ``configuration`` in its input."""
    inline = request.input.get("configuration")
    return {
        "credentials": request.credentials or {},
        "configuration": request.configuration or {},
        "inline": inline if isinstance(inline, Mapping) else {},
    }


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
        assume_credential: str | None = None,
    ) -> RunDetail:
        """:meth:`run` with what only the evals and the older harness use: ``network``
        ``"loopback"`` (real HTTP to servers on this machine, no samples),
        ``inject_failures`` (job key -> message: that step throws after its code),
        ``record_bodies`` (request bodies in ``RunDetail.events``) and
        ``assume_credential`` (a step that names no credential runs as if it named this
        one: graders that judge paths and payloads, not credentials, say so with it). The
        service never passes them (``TestRunner.run`` has none of them), so a user's
        run is as strict as OpenFn's CLI."""
        started = time.monotonic()
        try:  # parsing and exporting a large document is thread-pool work, not the loop's
            plan = await asyncio.to_thread(self._plan, workflow)
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
        if assume_credential is not None:
            plan = with_credential(plan, assume_credential)
        root = await self._root()
        limits = self.limits.for_request(request.timeout_s)
        state = initial_state(request)
        id_of = {key: step_id for step_id, key in plan.key_of.items()}
        payload = {
            "plan": plan.cli,
            "state": state,
            "credentials": credential_map(request, plan.cli),
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
        events, outcome = await run_node(
            root,
            payload,
            limits,
            isolate=self.isolate_network and network == "none",
            on_event=lambda event: self._progress(event, run_id, plan, on_progress),
        )
        outcome.duration_ms = int((time.monotonic() - started) * 1000)
        # Reading up to total_bytes of events and sweeping them for secrets: off the loop.
        return await asyncio.to_thread(
            _detail, run_id, plan, events, outcome, given_secrets(request), workflow_id, version
        )

    @staticmethod
    def _plan(workflow: WorkflowSource) -> RunPlan:
        if isinstance(workflow, WorkflowDocument):
            return plan_from_document(workflow)
        if isinstance(workflow, str):
            return plan_from_document(WorkflowDocument.from_yaml(workflow))
        return plan_from_cli(workflow)

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


def _detail(
    run_id: str,
    plan: RunPlan,
    events: list[dict[str, Any]],
    outcome: Outcome,
    configuration: Mapping[str, Any] | None,
    workflow_id: str | None,
    version: int | None,
) -> RunDetail:
    """The run node reported, its credential values masked in the run and the events;
    the summary names the credentials steps asked for that the run was not given (the
    CLI warns of them the same way)."""
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
    planned = next((e for e in events if e.get("ev") == "plan"), {})
    unmapped = [str(n) for n in planned.get("unmapped") or []]
    if unmapped and run.steps:
        names = ", ".join(repr(n) for n in unmapped)
        run.summary = (
            f"{run.summary} No value was given for credential {names}: the steps naming "
            "it ran without configuration, as in OpenFn's CLI."
        ).strip()
    if secrets:
        events = mask(events, secrets)
    return RunDetail(run=run, events=events, plan=plan)
