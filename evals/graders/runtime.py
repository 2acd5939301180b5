"""``runs_in_openfn``: the scenario's final workflow, executed by OpenFn's own runtime.

The final document is exported as a CLI ``workflow.json``
(``tools.document.openfn.to_cli_workflow``) and run in the pinned
``@openfn/runtime`` with the real adaptors npm serves here (common, http,
fhir; ``agents.testrun``) against a loopback mock HTTP server. It applies to
runs that changed the workflow (their output) and have jobs.

Without ``expect.runs`` it runs once, the mock answering every request 200
with ``{}``, and passes when every job compiles, no job calls a function its
adaptor does not export, nothing tries to reach another host, the run
completes and no step ends in an error. With ``expect.runs`` it runs once per
entry (``data`` is the input ``state.data`` and every mock answer, ``fail``
forces that step to fail after its own operations): each must take exactly
``path``, and no step but the forced one may fail.

"Not run" (``skipped``, which never counts as passed) when the workflow names
an adaptor not installed here, when a job body is outside the small
compiler's subset, or when node/npm are missing.
"""

from __future__ import annotations

from typing import Any

from agents.testrun.install import OpenFnRuntimeUnavailable, pinned
from agents.testrun.mock_http import MockHttp, Request
from agents.testrun.runtime import RuntimeRun, run_cli_workflow
from evals.execute import RunOutcome
from evals.graders.base import GradeResult, resolve_job
from evals.scenario import RunExpect, Scenario
from tools.document import WorkflowDocument
from tools.document.openfn import to_cli_workflow
from tools.document.openfn.ids import step_ids
from tools.document.structure import Structure
from tools.errors import DocumentError

NAME = "runs_in_openfn"


def _adaptor_name(specifier: str) -> str:
    at = specifier.rfind("@")
    return specifier[:at] if at > 0 else specifier


def _not_installed(structure: Structure) -> list[str]:
    installed = set(pinned())
    wanted = {job.adaptor for job in structure.jobs.values()}
    return sorted(a for a in wanted if _adaptor_name(a) not in installed)


def _not_run(run: RuntimeRun) -> GradeResult:
    reasons = [f"{s}: {e['message']}" for s, e in run.compile_errors.items()]
    reasons += [f"{s}: {', '.join(a)} not installed" for s, a in run.not_installed.items()]
    return GradeResult.skip(NAME, "not run: " + "; ".join(reasons))


def _problems(run: RuntimeRun, forced: str | None, path: list[str] | None) -> list[str]:
    problems = run.problems()
    problems += [f"{s} failed: {e}" for s, e in run.errors.items() if s != forced]
    if forced is not None and forced not in run.errors and forced in run.path:
        problems.append(f"{forced} was forced to fail but did not")
    if run.status != "ran" and not problems:
        problems.append(f"the runtime did not run it ({run.status})")
    if path is not None and run.path != path:
        problems.append(
            f"took {' -> '.join(run.path) or '(nothing)'}, expected {' -> '.join(path)}"
        )
    elif not run.path and not problems:
        problems.append("no step ran")
    return problems


def _versions(runs: list[RuntimeRun]) -> str:
    names = {
        f"{a['name'].removeprefix('@openfn/')}@{a['ran']}"
        for run in runs
        for used in run.adaptor_versions.values()
        for a in used
    }
    return ", ".join(sorted(names))


def _step_id(structure: Structure, ids: dict[str, str], ref: str) -> str:
    key = resolve_job(structure, ref)
    return ids[key] if key is not None else f"<no step {ref!r}>"


def runs_in_openfn(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """See the module docstring. Blocks on node (~1-2 s a run); call it from a thread."""
    if outcome.error is not None or outcome.after_yaml == outcome.before_yaml:
        return None  # judges output: a run that changed nothing produced none
    if not outcome.after_doc.structure.jobs:
        return None
    return run_document(outcome.after_doc, scenario.expect.runs)


def run_document(
    doc: WorkflowDocument,
    expected: list[RunExpect],
    *,
    requests: list[Request] | None = None,
    data: Any = None,
) -> GradeResult:
    """``doc`` run in @openfn/runtime once per ``expected`` run (none: one clean run on
    ``data``, ``{}`` by default); every request it made is added to ``requests``."""
    structure = doc.structure
    missing = _not_installed(structure)
    if missing:
        return GradeResult.skip(NAME, f"not run: {', '.join(missing)} not installed here")
    try:
        plan = to_cli_workflow(doc)
    except DocumentError as exc:
        return GradeResult.fail(NAME, f"cannot be exported as a CLI workflow: {exc.message}")
    ids = step_ids(structure).jobs
    wanted = expected or [RunExpect(path=[], data={} if data is None else data)]
    runs: list[RuntimeRun] = []
    problems: list[str] = []
    clean = 0
    for index, spec in enumerate(wanted, 1):
        forced = _step_id(structure, ids, spec.fail) if spec.fail else None
        path = [_step_id(structure, ids, ref) for ref in spec.path] if expected else None
        try:
            with MockHttp(default=spec.data) as mock:
                run = run_cli_workflow(
                    plan,
                    mock=mock,
                    state={"data": spec.data},
                    inject_failures={forced: "forced failure"} if forced else None,
                )
        except OpenFnRuntimeUnavailable as exc:
            return GradeResult.skip(NAME, f"not run: {exc.message.splitlines()[0]}")
        if requests is not None:
            requests += mock.requests
        if run.status == "not_run":
            return _not_run(run)
        runs.append(run)
        label = f"run {index}" + (f" (fail {spec.fail})" if spec.fail else "")
        found = _problems(run, forced, path)
        clean += not found
        problems += [f"{label}: {p}" for p in found]
    if problems:
        return GradeResult.fail(NAME, "; ".join(problems[:6]), round(clean / len(wanted), 3))
    shown = "; ".join(" -> ".join(run.path) for run in runs)
    return GradeResult.ok(
        NAME, f"{len(runs)} run(s) in @openfn/runtime ({_versions(runs)}): {shown}"
    )
