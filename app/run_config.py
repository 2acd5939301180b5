"""What the service test-runs workflows with, from its settings (DESIGN §5c): the
runner (:func:`build_runner`: OpenFn's runtime in a node subprocess, with the
settings' limits) and how runs are admitted (:class:`RunPolicy`: time limits,
runs at once, the wait for a free slot, listing size).

:class:`app.runs.RunService` takes any ``agents.testrun.TestRunner``, so tests hand it
a fake.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.api import DEFAULT_CACHE_DIR, LocalRunner, RunLimits, TestRunner
from app.settings import Settings


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
