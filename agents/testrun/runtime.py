"""Run a CLI ``workflow.json`` in the pinned ``@openfn/runtime`` (``run.mjs``).

``run_cli_workflow(plan, state=..., mock=..., inject_failures=...)`` writes the
input for ``run.mjs``, runs it with node (``--experimental-vm-modules``, which
the runtime's module loader needs, as OpenFn's CLI passes it) and returns a
:class:`RuntimeRun`: which steps started, in order (a step reached along two
edges runs twice, as in OpenFn), which failed and why, and whether anything
could not run here. Every step's ``configuration.baseUrl`` points at the mock
server; ``run.mjs`` refuses any connection that is not loopback.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.testrun.install import (
    DEFAULT_CACHE_DIR,
    OpenFnRuntimeUnavailable,
    ensure_installed,
    node_path,
)
from agents.testrun.mock_http import MockHttp

_NODE_TIMEOUT_S = 120


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
) -> RuntimeRun:
    """Execute ``plan`` (a CLI workflow.json) against the running ``mock`` server."""
    root = ensure_installed(cache_dir)
    payload = {
        "plan": plan,
        "state": dict(state) if state is not None else {"data": {}},
        "base_url": mock.base_url,
        "inject_failures": dict(inject_failures or {}),
    }
    with tempfile.TemporaryDirectory(prefix="openfn-run-") as tmp:
        source, target = Path(tmp) / "input.json", Path(tmp) / "output.json"
        source.write_text(json.dumps(payload), encoding="utf-8")
        try:
            done = subprocess.run(
                [
                    node_path(),
                    "--experimental-vm-modules",
                    "--no-warnings",
                    "run.mjs",
                    str(source),
                    str(target),
                ],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=_NODE_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise OpenFnRuntimeUnavailable(f"run.mjs took over {_NODE_TIMEOUT_S}s") from exc
        if done.returncode != 0 or not target.is_file():
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-30:])
            raise OpenFnRuntimeUnavailable(f"run.mjs failed (exit {done.returncode}):\n{tail}")
        out = json.loads(target.read_text(encoding="utf-8"))
    return RuntimeRun(
        status=out["status"],
        path=out["path"],
        errors=out["errors"],
        events=out["events"],
        compile=out["compile"],
        compile_errors=out["compile_errors"],
        not_installed=out["not_installed"],
        adaptor_versions=out["adaptor_versions"],
        crash=out["crash"],
        network_violations=out["network_violations"],
        final=out["final"],
    )
