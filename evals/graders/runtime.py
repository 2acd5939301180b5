"""``runs_in_openfn``: the scenario's final workflow, executed by OpenFn's own runtime.

The final document is exported as a CLI ``workflow.json``
(``tools.document.openfn.to_cli_workflow``) and run once in the pinned
``@openfn/runtime`` with the real ``@openfn/language-common`` /
``@openfn/language-http`` (``evals.openfn``) against a loopback mock HTTP
server that answers every request 200 with ``{}``. It applies to runs that
changed the workflow (their output). It passes when every job
compiles, no job calls a function its adaptor does not export, nothing tries
to reach another host, the run completes and no step ends in an error.

"Not run" (``skipped``, which never counts as passed) when the workflow names
an adaptor not installed here (anything but common and http), when a job body
is outside the small compiler's subset, or when node/npm are missing. A
workflow without jobs has nothing to run: the grader does not apply.
"""

from __future__ import annotations

from evals.execute import RunOutcome
from evals.graders.base import GradeResult
from evals.openfn.install import OpenFnRuntimeUnavailable, pinned
from evals.openfn.mock_http import MockHttp
from evals.openfn.runtime import RuntimeRun, run_cli_workflow
from evals.scenario import Scenario
from tools.document.openfn import to_cli_workflow
from tools.errors import DocumentError

NAME = "runs_in_openfn"


def _adaptor_name(specifier: str) -> str:
    at = specifier.rfind("@")
    return specifier[:at] if at > 0 else specifier


def _not_installed(outcome: RunOutcome) -> list[str]:
    installed = set(pinned())
    wanted = {job.adaptor for job in outcome.after_doc.structure.jobs.values()}
    return sorted(a for a in wanted if _adaptor_name(a) not in installed)


def _verdict(run: RuntimeRun) -> GradeResult:
    if run.status == "not_run":
        reasons = [f"{s}: {e['message']}" for s, e in run.compile_errors.items()]
        reasons += [f"{s}: {', '.join(a)} not installed" for s, a in run.not_installed.items()]
        return GradeResult.skip(NAME, "not run: " + "; ".join(reasons))
    problems = run.problems()
    problems += [f"{step} failed: {error}" for step, error in run.errors.items()]
    if run.status != "ran" and not problems:
        problems.append(f"the runtime did not run it ({run.status})")
    if not run.path and not problems:
        problems.append("no step ran")
    shown = " -> ".join(run.path) or "(none)"
    if problems:
        return GradeResult.fail(NAME, f"ran {shown}; " + "; ".join(problems[:4]))
    versions = sorted(
        {
            f"{a['name'].removeprefix('@openfn/')}@{a['ran']}"
            for used in run.adaptor_versions.values()
            for a in used
        }
    )
    return GradeResult.ok(NAME, f"ran {shown} in @openfn/runtime ({', '.join(versions)})")


def runs_in_openfn(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """See the module docstring. Blocks on node (~1-2 s); call it from a thread."""
    if outcome.error is not None or outcome.after_yaml == outcome.before_yaml:
        return None  # judges output: a run that changed nothing produced none
    if not outcome.after_doc.structure.jobs:
        return None
    missing = _not_installed(outcome)
    if missing:
        return GradeResult.skip(NAME, f"not run: {', '.join(missing)} not installed here")
    try:
        plan = to_cli_workflow(outcome.after_doc)
    except DocumentError as exc:
        return GradeResult.fail(NAME, f"cannot be exported as a CLI workflow: {exc.message}")
    try:
        with MockHttp() as mock:
            run = run_cli_workflow(plan, mock=mock, state={"data": {}})
    except OpenFnRuntimeUnavailable as exc:
        return GradeResult.skip(NAME, f"not run: {exc.message.splitlines()[0]}")
    return _verdict(run)
