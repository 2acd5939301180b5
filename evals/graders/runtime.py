"""``runs_in_openfn``: the scenario's final workflow, test-run in OpenFn's own runtime.

The final document runs through the service's own runner (``agents.testrun``,
DESIGN §5c): its ``cli`` export in the pinned ``@openfn/runtime`` with the real
adaptors npm serves here (common, http, fhir), in a node subprocess where no HTTP
call leaves the machine: a call matching one of the run's sample ``responses``
(method and URL, a URL ending in ``*`` a prefix) gets it, any other gets an error.
It applies to runs that changed the workflow (their output) and have jobs.

With ``expect.runs`` it test-runs once per entry (``data`` is the input
``state.data``, ``responses`` the samples, ``fail`` forces that step to fail after
its own operations): each must take exactly ``path`` (the job keys of the steps that
started, in order), no step but the forced one may fail, no job may call a function
its adaptor does not export, and every call no sample answered (``matched: false``
in the run's ``requests``, a refused connection included) is a problem unless the
entry lists it in ``unmatched`` (then it must happen, and the step that made it may
fail of it). Every credential a step names gets ``configuration`` (by default
``baseUrl`` ``https://sample.test``, so relative URLs in the code resolve there), and
a step that names none runs as if it named ``planwright-sample`` (the grader judges
paths and payloads; a user's test run is as strict as OpenFn's CLI, where such a step
has no configuration).

Without ``expect.runs`` it is one smoke run on ``{}`` where every call is answered
200 ``{}`` (a ``*`` sample per method): every job loads, calls only what its adaptor
exports, and no step fails; the path is not judged.

"Not run" (``skipped``, which never counts as passed): the workflow names an adaptor
not installed here, the runner reports a step ``unsupported`` (code outside what it
can load here), or node/npm are missing. Code that does not parse is reported
``unsupported`` by the runner too, but it is broken everywhere: that fails.
"""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from agents.testrun import OpenFnRuntimeUnavailable, RunDetail, run_sync_detail
from agents.testrun.install import pinned
from agents.testrun.runtime import SAMPLE_CREDENTIAL
from evals.execute import RunOutcome
from evals.graders.base import GradeResult, resolve_job
from evals.scenario import RunExpect, Scenario
from tools.document import WorkflowDocument
from tools.document.openfn import to_cli_workflow
from tools.document.structure import Structure
from tools.errors import DocumentError
from tools.testrun import RequestRecord, RunRequest, SampleResponse, TestRun

NAME = "runs_in_openfn"
FORCED_FAILURE = "forced failure"
"""The message a step forced to fail (``RunExpect.fail``) throws."""
ANSWER_ALL_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def answer_all(body: object = None) -> list[SampleResponse]:
    """Samples answering every call 200 with ``body`` (``{}`` when None): a smoke run's."""
    answer = {} if body is None else body
    return [SampleResponse(method=m, url="*", status=200, body=answer) for m in ANSWER_ALL_METHODS]


SMOKE_RUN = RunExpect(path=[], responses=answer_all())
"""The one run of a scenario without ``expect.runs`` (its path is not judged)."""


def _adaptor_name(specifier: str) -> str:
    at = specifier.rfind("@")
    return specifier[:at] if at > 0 else specifier


def _not_installed(structure: Structure) -> list[str]:
    """Adaptors no installed package provides: the runner would say ``unsupported``
    for each; known here without starting node."""
    installed = set(pinned())
    wanted = {job.adaptor for job in structure.jobs.values()}
    return sorted(a for a in wanted if _adaptor_name(a) not in installed)


@dataclass(frozen=True)
class Unmatched:
    """A ``RunExpect.unmatched`` entry: ``METHOD URL``, the URL exact or a ``*`` prefix."""

    method: str
    url: str

    @classmethod
    def parse(cls, text: str) -> Unmatched:
        method, _, url = text.partition(" ")
        return cls(method.upper(), url.strip())

    def covers(self, request: RequestRecord) -> bool:
        if request.method.upper() != self.method:
            return False
        if self.url.endswith("*"):
            return request.url.startswith(self.url[:-1])
        return request.url == self.url

    def __str__(self) -> str:
        return f"{self.method} {self.url}"


def _unknown_operations(detail: RunDetail) -> dict[str, list[str]]:
    """Job key -> functions its code calls that its adaptor does not export (the
    compiler's ``plan`` event; such a call would only fail at run time)."""
    plan_event = next((e for e in detail.events if e.get("ev") == "plan"), {})
    found: dict[str, list[str]] = {}
    for step_id, compiled in (plan_event.get("compile") or {}).items():
        unknown = [str(n) for n in compiled.get("unknown") or []]
        if unknown:
            key = detail.plan.key(step_id) if detail.plan is not None else step_id
            found[key or step_id] = unknown
    return found


def _problems(
    detail: RunDetail, spec: RunExpect, forced: str | None, path: list[str] | None
) -> list[str]:
    run = detail.run
    problems = [f"{k} calls unknown {', '.join(n)}" for k, n in _unknown_operations(detail).items()]
    if run.status == "timed_out":
        problems.append(f"timed out: {run.error}")
    elif run.error:
        problems.append(f"the runtime did not finish it: {run.error}")
    expected_unmatched = [Unmatched.parse(u) for u in spec.unmatched]
    # A step whose call was meant to go unanswered may fail of it (the path says
    # whether the workflow then did what the scenario expects).
    answerless = {
        r.step_key
        for r in run.requests
        if not r.matched and any(u.covers(r) for u in expected_unmatched)
    }
    for step in run.steps:
        if step.status != "failed" or step.key in answerless:
            continue
        if step.key != forced:
            problems.append(f"{step.key} failed: {step.error}")
        elif FORCED_FAILURE not in (step.error or ""):  # its own code broke first
            problems.append(f"{step.key} failed before its forced failure: {step.error}")
    ran = [s.key for s in run.steps]
    if (
        forced is not None
        and forced in ran
        and not any(s.key == forced and s.status == "failed" for s in run.steps)
    ):
        problems.append(f"{forced} was forced to fail but did not")
    for request in run.requests:
        if not request.matched and not any(u.covers(request) for u in expected_unmatched):
            where = f"{request.step_key}: " if request.step_key else ""
            problems.append(f"{where}no sample answered {request.method} {request.url}")
    for wanted in expected_unmatched:
        if not any(wanted.covers(r) and not r.matched for r in run.requests):
            problems.append(f"expected {wanted} to go unanswered, but no such call was left so")
    if path is not None and ran != path:
        problems.append(f"took {' -> '.join(ran) or '(nothing)'}, expected {' -> '.join(path)}")
    elif not ran and not problems:
        problems.append("no step ran")
    return problems


def _versions(runs: list[TestRun]) -> str:
    names = {
        f"{package.removeprefix('@openfn/')}@{version}"
        for run in runs
        for package, version in run.runtime.items()
        if package.startswith("@openfn/language-")
    }
    return ", ".join(sorted(names))


def _job_key(structure: Structure, ref: str) -> str:
    key = resolve_job(structure, ref)
    return key if key is not None else f"<no step {ref!r}>"


def _syntax_errors(detail: RunDetail) -> list[str]:
    """Job keys whose code does not parse: broken code, which fails everywhere, not a
    limit of this runtime (the runner says ``unsupported`` for it too; its event's
    ``kind`` tells them apart)."""
    event = next((e for e in detail.events if e.get("ev") == "unsupported"), {})
    ids = [str(s.get("id")) for s in event.get("steps") or [] if s.get("kind") == "syntax"]
    plan = detail.plan
    return [(plan.key(i) if plan is not None else None) or i for i in ids]


def _not_run(detail: RunDetail) -> GradeResult:
    run = detail.run
    broken = set(_syntax_errors(detail))
    if broken:
        reasons = [f"{u.key}: {u.reason}" for u in run.unsupported if u.key in broken]
        return GradeResult.fail(NAME, "; ".join(reasons))
    reasons = [f"{u.key}: {u.reason}" for u in run.unsupported] or [run.error or "unsupported"]
    return GradeResult.skip(NAME, "not run: " + "; ".join(reasons))


def _execute(doc: WorkflowDocument, request: RunRequest, **options: Any) -> RunDetail:
    """``run_sync_detail``, also from a thread with a running event loop (the runner
    runs its own loop; there it gets a thread of its own and this one waits)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_sync_detail(doc, request, **options)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run_sync_detail, doc, request, **options).result()


def runs_in_openfn(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """See the module docstring. Blocks on node (~1 s a run); call it from a thread."""
    if outcome.error is not None or outcome.after_yaml == outcome.before_yaml:
        return None  # judges output: a run that changed nothing produced none
    if not outcome.after_doc.structure.jobs:
        return None
    return run_document(outcome.after_doc, scenario.expect.runs)


def run_document(
    doc: WorkflowDocument,
    expected: list[RunExpect],
    *,
    smoke: RunExpect | None = None,
    details: list[RunDetail] | None = None,
) -> GradeResult:
    """``doc`` test-run once per ``expected`` entry (none: one ``smoke`` run, by default
    :data:`SMOKE_RUN`, whose path is not judged); each run's detail, with request bodies,
    is added to ``details`` when given."""
    structure = doc.structure
    missing = _not_installed(structure)
    if missing:
        return GradeResult.skip(NAME, f"not run: {', '.join(missing)} not installed here")
    try:
        to_cli_workflow(doc)
    except DocumentError as exc:
        return GradeResult.fail(NAME, f"cannot be exported as a CLI workflow: {exc.message}")
    wanted = expected or [smoke or SMOKE_RUN]
    runs: list[TestRun] = []
    problems: list[str] = []
    clean = 0
    for index, spec in enumerate(wanted, 1):
        forced = _job_key(structure, spec.fail) if spec.fail else None
        path = [_job_key(structure, ref) for ref in spec.path] if expected else None
        request = RunRequest(
            input={"data": spec.data},
            responses=spec.responses,
            configuration=spec.configuration or None,
        )
        try:
            detail = _execute(
                doc,
                request,
                run_id=f"eval-{uuid.uuid4().hex}",
                inject_failures={forced: FORCED_FAILURE} if forced else None,
                record_bodies=details is not None,
                assume_credential=SAMPLE_CREDENTIAL,
            )
        except OpenFnRuntimeUnavailable as exc:
            return GradeResult.skip(NAME, f"not run: {exc.message.splitlines()[0]}")
        if detail.run.status == "unsupported":
            return _not_run(detail)
        if details is not None:
            details.append(detail)
        runs.append(detail.run)
        label = f"run {index}" + (f" (fail {spec.fail})" if spec.fail else "")
        found = _problems(detail, spec, forced, path)
        clean += not found
        problems += [f"{label}: {p}" for p in found]
    if problems:
        return GradeResult.fail(NAME, "; ".join(problems[:6]), round(clean / len(wanted), 3))
    shown = "; ".join(" -> ".join(s.key for s in run.steps) for run in runs)
    return GradeResult.ok(
        NAME, f"{len(runs)} run(s) in @openfn/runtime ({_versions(runs)}): {shown}"
    )
