"""Test runs: a workflow executed in OpenFn's own runtime on a sample (DESIGN §5c).

The front door for the service, the chat tool, the evals and the tests::

    from agents.testrun import LocalRunner, RunLimits, TestRunner, run_sync

    runner: TestRunner = LocalRunner(RunLimits(timeout_s=20), cache_dir)
    run = await runner.run(doc_yaml, RunRequest(input={...}, responses=[...]),
                           run_id="r1", on_progress=send)

``LocalRunner`` (``local``; the process itself in ``process``) starts one node
subprocess per run with ``node/run.mjs``:
the pinned npm ``@openfn/runtime`` with the real adaptors (``node/package.json`` +
the committed ``package-lock.json``, installed by ``install``), every HTTP request
answered from the run's samples inside node, every socket refused, every file outside
the runtime, every write and every process refused by node's permission model
(``process``). ``report`` turns
node's events into :class:`tools.testrun.TestRun`; ``limits`` holds the defaults;
``runtime`` keeps the older ``run_cli_workflow`` (real HTTP to loopback mock servers)
that ``tests/external`` and the eval grader use.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from agents.testrun.install import DEFAULT_CACHE_DIR, OpenFnRuntimeUnavailable, ensure_installed
from agents.testrun.limits import RunLimits
from agents.testrun.local import (
    LocalRunner,
    NetworkMode,
    ProgressCallback,
    RunDetail,
    WorkflowSource,
)
from tools.testrun import RunRequest, TestRun

__all__ = [
    "DEFAULT_CACHE_DIR",
    "LocalRunner",
    "OpenFnRuntimeUnavailable",
    "ProgressCallback",
    "RunDetail",
    "RunLimits",
    "TestRunner",
    "WorkflowSource",
    "ensure_installed",
    "run_sync",
    "run_sync_detail",
]


class TestRunner(Protocol):
    """Runs a workflow on a sample in OpenFn's runtime and reports what happened.

    ``workflow``: Planwright YAML text, a ``WorkflowDocument`` (both exported to the
    ``cli`` form here, step ids mapped back to job keys) or a CLI ``workflow.json``
    object (its step ids are the keys). ``on_progress`` is awaited for each step's
    start and end, in order. Raises ``OpenFnRuntimeUnavailable``
    (``openfn_runtime_unavailable``) when node or the pinned packages are missing, or
    node cannot confine the job code (its permission model, ``process``);
    everything else (a failing step, a time-out, code the runtime cannot load) is a
    ``TestRun`` with its status. The local subprocess (:class:`LocalRunner`) is the
    embedded default; an OpenFn worker or a Lightning instance is the place to grow to.
    """

    async def run(
        self,
        workflow: WorkflowSource,
        request: RunRequest,
        *,
        run_id: str,
        on_progress: ProgressCallback | None = None,
        workflow_id: str | None = None,
        version: int | None = None,
    ) -> TestRun: ...


def run_sync_detail(
    workflow: WorkflowSource,
    request: RunRequest | None = None,
    *,
    limits: RunLimits | None = None,
    cache_dir: Path = DEFAULT_CACHE_DIR,
    run_id: str | None = None,
    network: NetworkMode = "none",
    inject_failures: Mapping[str, str] | None = None,
    record_bodies: bool = False,
    assume_credential: str | None = None,
) -> RunDetail:
    """Run synchronously (evals, tests, scripts; never inside a running event loop),
    installing the pinned packages first if needed. ``inject_failures`` (job key ->
    message, evals only) makes those steps throw after their code; ``record_bodies``
    keeps request bodies in the detail's events; ``assume_credential`` (evals only) is
    the credential a step naming none runs with (see ``LocalRunner.execute``)."""
    runner = LocalRunner(limits, cache_dir, install=True)
    return asyncio.run(
        runner.execute(
            workflow,
            request or RunRequest(),
            run_id=run_id or uuid.uuid4().hex,
            network=network,
            inject_failures=inject_failures,
            record_bodies=record_bodies,
            assume_credential=assume_credential,
        )
    )


def run_sync(
    workflow: WorkflowSource,
    request: RunRequest | None = None,
    *,
    limits: RunLimits | None = None,
    cache_dir: Path = DEFAULT_CACHE_DIR,
    run_id: str | None = None,
    inject_failures: Mapping[str, str] | None = None,
) -> TestRun:
    """:func:`run_sync_detail`'s run."""
    return run_sync_detail(
        workflow,
        request,
        limits=limits,
        cache_dir=cache_dir,
        run_id=run_id,
        inject_failures=inject_failures,
    ).run
