"""The older harness: a CLI ``workflow.json`` against real HTTP servers on loopback.

``run_cli_workflow(plan, mock=..., state=..., inject_failures=...)`` runs ``plan``
with the one runner (:meth:`agents.testrun.LocalRunner.execute`, ``network
"loopback"``: no samples, real HTTP to this machine only, every other host refused)
and ``configuration.baseUrl`` set to the mock server for every credential the steps
name (with ``assume_credential``, the default, a step naming none runs as if it named
:data:`SAMPLE_CREDENTIAL`; ``None`` runs it as OpenFn's CLI does, with no
configuration, so a relative URL fails there), and returns a
:class:`RuntimeRun` keyed by OpenFn step ids: which steps started, in order (a step
reached along two edges runs twice, as in OpenFn), which failed and why, and
whether anything could not run here. ``tests/external`` and the eval grader use
it; new callers use ``agents.testrun.run_sync`` with samples instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.testrun.install import DEFAULT_CACHE_DIR, OpenFnRuntimeUnavailable
from agents.testrun.limits import RunLimits
from agents.testrun.mock_http import MockHttp
from tools.testrun import RunRequest

SAMPLE_CREDENTIAL = "planwright-sample"
"""The credential the harness and the eval grader assume for a step that names none:
they judge paths and payloads, not credentials (issue 27 attaches real ones)."""
_NODE_TIMEOUT_S = 120
_LIMITS = RunLimits(
    timeout_s=_NODE_TIMEOUT_S, step_bytes=4 * 1024 * 1024, total_bytes=64 * 1024 * 1024
)


@dataclass(frozen=True)
class RuntimeRun:
    """What ``run.mjs`` reported for one execution."""

    status: str
    """``ran``; ``not_run`` (an adaptor not installed here, or code outside the
    compiler's subset); or ``invalid`` (not a CLI workflow, a syntax error, a crash)."""
    path: list[str] = field(default_factory=list)
    """Step ids in the order they started (a step run twice appears twice)."""
    errors: dict[str, str] = field(default_factory=dict)
    """Step id -> the error it ended with (``state.errors`` in OpenFn)."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """``job-start`` / ``job-complete`` / ``job-error`` notifications, with ``next``."""
    compile: dict[str, Any] = field(default_factory=dict)
    """Step id -> ``{imports, operations, unknown}`` from the compiler."""
    compile_errors: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Step id -> ``{kind: syntax|subset, message, line, column}``."""
    not_installed: dict[str, list[str]] = field(default_factory=dict)
    """Step id -> adaptors it names that are not installed here."""
    adaptor_versions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Step id -> ``[{name, requested, ran}]``: which adaptor version actually ran."""
    crash: str | None = None
    """The run as a whole failed (bad plan, edge condition error)."""
    network_violations: list[str] = field(default_factory=list)
    """Connections refused because they were not to loopback."""
    final: Any = None
    """The final state (or states, keyed by leaf step) the runtime returned."""

    @property
    def counts(self) -> Counter[str]:
        return Counter(self.path)

    @property
    def unknown_operations(self) -> dict[str, list[str]]:
        return {s: c["unknown"] for s, c in self.compile.items() if c.get("unknown")}

    def problems(self) -> list[str]:
        """Why this run is not a clean execution ([] when it is)."""
        found = [f"network: {v}" for v in self.network_violations]
        if self.crash:
            found.append(f"crash: {self.crash}")
        found += [f"{s}: {e['message']}" for s, e in self.compile_errors.items()]
        found += [f"{s} calls unknown {', '.join(n)}" for s, n in self.unknown_operations.items()]
        return found


def run_cli_workflow(
    plan: Mapping[str, Any],
    *,
    mock: MockHttp,
    state: Mapping[str, Any] | None = None,
    inject_failures: Mapping[str, str] | None = None,
    cache_dir: Path = DEFAULT_CACHE_DIR,
    assume_credential: str | None = SAMPLE_CREDENTIAL,
) -> RuntimeRun:
    """Execute ``plan`` (a CLI workflow.json) against the running ``mock`` server."""
    from agents.testrun import run_sync_detail  # the front door imports this module

    detail = run_sync_detail(
        plan,
        RunRequest(
            input=dict(state) if state is not None else {"data": {}},
            configuration={"baseUrl": mock.base_url},
        ),
        assume_credential=assume_credential,
        limits=_LIMITS,
        cache_dir=cache_dir,
        network="loopback",
        inject_failures=inject_failures,
    )
    return from_events(detail.events)


def from_events(events: list[dict[str, Any]]) -> RuntimeRun:
    """``run.mjs``'s events as a :class:`RuntimeRun` (raises when node did not finish)."""
    done = next((e for e in events if e.get("ev") == "done"), None)
    if done is None:
        raise OpenFnRuntimeUnavailable("run.mjs ended without finishing the run")
    plan = next((e for e in events if e.get("ev") == "plan"), {})
    unsupported: list[dict[str, Any]] = next(
        (e["steps"] for e in events if e.get("ev") == "unsupported"), []
    )
    path: list[str] = []
    errors: dict[str, str] = {}
    notified: list[dict[str, Any]] = []
    violations: list[str] = []
    for event in events:
        kind = event.get("ev")
        if kind == "step-start":
            path.append(event["id"])
            notified.append({"event": "job-start", "step": event["id"]})
        elif kind == "step-end":
            failed = event.get("status") == "failed"
            entry: dict[str, Any] = {
                "event": "job-error" if failed else "job-complete",
                "step": event["id"],
            }
            if event.get("next"):
                entry["next"] = event["next"]
            if failed:
                entry["error"] = event.get("error")
                errors[event["id"]] = event.get("error") or ""
            notified.append(entry)
        elif kind == "violation":
            violations.append(str(event.get("message")))
    compile_errors = {
        s["id"]: {
            "kind": s["kind"],
            "message": s["reason"],
            "line": s.get("line"),
            "column": s.get("column"),
        }
        for s in unsupported
        if s["kind"] in ("syntax", "subset")
    }
    not_installed = {
        s["id"]: list(s.get("adaptors") or []) for s in unsupported if s["kind"] == "not_installed"
    }
    status = {"ran": "ran", "unsupported": "not_run"}.get(done["status"], "invalid")
    if any(e["kind"] == "syntax" for e in compile_errors.values()):
        status = "invalid"
    crash = done.get("error") if done["status"] in ("invalid", "crashed", "timed_out") else None
    return RuntimeRun(
        status=status,
        path=path,
        errors=errors,
        events=notified,
        compile=plan.get("compile") or {},
        compile_errors=compile_errors,
        not_installed=not_installed,
        adaptor_versions=plan.get("adaptors") or {},
        crash=crash,
        network_violations=violations,
        final=done.get("final"),
    )
