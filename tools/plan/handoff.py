"""Hand-offs between planned workflows, in OpenFn terms (DESIGN §5a.4).

A :class:`~tools.plan.model.Contract` ``A -> B`` means A's run ends by posting
its result to B's webhook. Two pure functions turn a contract into the ordinary
tool calls that build it, as ``(tool_name, args)`` pairs:

* :func:`receiving_calls` on B: its trigger becomes a webhook whose
  ``custom_path`` is the contract's ``webhook_path`` (Lightning serves it at
  ``/i/<webhook_path>``); other webhook settings are kept.
* :func:`handoff_calls` on A: a step "Hand off to <B's name>" on
  ``@openfn/language-http`` that POSTs ``state.data`` as JSON to
  ``/i/<webhook_path>``, connected on success after each of A's terminal
  steps (or from the trigger when A has no steps yet).

The hand-off step runs with the credential :data:`HANDOFF_CREDENTIAL`
(``lightning-webhooks``): a Lightning *http* credential whose ``baseUrl`` is the
Lightning instance's URL (``https://app.openfn.org``, or the self-hosted
address), so the step reaches ``<baseUrl>/i/<webhook_path>``. When B's webhook
requires authentication, the same credential carries it (``username`` and
``password`` for basic auth, which language-http adds to every request). It
holds no secret in the workflow: the document names the credential only.

Both functions are idempotent: a structure that already has what the contract
asks for gives no calls, so rebuilding a plan never adds a second hand-off.
Every call but one goes through :func:`tools.registry.run_tool`; the step's code
is an ``edit_job_code`` call (the code sub-agent's tool, which the server stitches
in after the code checks), so :func:`run_call` / :func:`apply_calls` run a list
of calls against a document whatever their kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tools.base import ToolContext, ToolResult
from tools.catalogue.names import split_adaptor
from tools.document import WorkflowDocument
from tools.document.names import MAX_NAME_LENGTH, derive_key, is_valid_key, sanitise_name
from tools.document.structure import Job, Structure
from tools.edits import add_edges, add_jobs, set_trigger, update_jobs
from tools.edits.edit_job_code import EditJobCodeArgs
from tools.errors import PlanwrightError, ToolInputError
from tools.jobcode import CodeEdit, apply_code_edits
from tools.jobcode.stitch import stitch_job_code
from tools.plan.model import Contract
from tools.registry import CODE_EDIT_TOOL, default_context, run_tool

ToolCall = tuple[str, dict[str, Any]]
"""One tool call: the tool's name and its arguments (JSON-shaped)."""

HANDOFF_CREDENTIAL = "lightning-webhooks"
"""The Lightning credential hand-off steps run with: ``{"baseUrl": <Lightning URL>}``."""
HANDOFF_ADAPTOR = "http"
HANDOFF_PACKAGE = "@openfn/language-http"
WEBHOOK_PREFIX = "/i/"
"""Where Lightning serves a webhook trigger's custom path."""

# A hand-off step is recognised by its code, whatever it was renamed to: it POSTs to a
# Lightning webhook path. The path rule is the document's key rule, so it is safe to
# put in a URL and a JavaScript string as is.
_POST_TO_WEBHOOK = re.compile(r"""\bpost\(\s*(['"`])/i/([A-Za-z0-9][A-Za-z0-9_-]*)\1""")
_FAILURE = "on_job_failure"


def handoff_path(job: Job) -> str | None:
    """The webhook path ``job`` hands off to, when it is a hand-off step."""
    if split_adaptor(job.adaptor)[0] != HANDOFF_PACKAGE or not job.body:
        return None
    found = _POST_TO_WEBHOOK.search(job.body)
    return found.group(2) if found else None


def find_handoff(structure: Structure, webhook_path: str) -> str | None:
    """The key of the step that already hands off to ``webhook_path``, or None."""
    return next((k for k, j in structure.jobs.items() if handoff_path(j) == webhook_path), None)


def handoff_code(contract: Contract, target_name: str) -> str:
    """The hand-off step's code: POST this run's result to the target's webhook.

    The body is a JSON string: language-http sends it with ``Content-Type:
    application/json`` (its default), which is what Lightning parses into the
    target run's input, and a string goes through language-common's encoder
    unchanged for arrays and objects alike (an array body would not).
    """
    path = _checked_path(contract.webhook_path)
    name = sanitise_name(target_name) or contract.target
    return (
        f"// Hand off to {name}: POST this run's result (state.data) to its webhook.\n"
        f"// Credential '{HANDOFF_CREDENTIAL}': {{ baseUrl: <the Lightning instance URL> }};\n"
        f"// Lightning serves the webhook's custom path at {WEBHOOK_PREFIX}{path}.\n"
        f"post('{WEBHOOK_PREFIX}{path}', state => JSON.stringify(state.data ?? {{}}));"
    )


def receiving_calls(structure: Structure, contract: Contract) -> list[ToolCall]:
    """The calls that make ``structure`` (the contract's target) start on its webhook.

    The one webhook trigger gets ``custom_path = contract.webhook_path`` (its other
    settings kept); a workflow without a trigger gets a new webhook; a single trigger
    of another type becomes that webhook. No calls when a webhook already has the
    path. Several triggers and no single webhook among them: ``ambiguous_trigger``.
    """
    path = _checked_path(contract.webhook_path)
    triggers = list(structure.triggers.values())
    webhooks = [t for t in triggers if t.type == "webhook"]
    if any(t.custom_path == path for t in webhooks):
        return []
    tool = set_trigger.TOOL.name
    if len(webhooks) == 1:
        return [(tool, {"type": "webhook", "key": webhooks[0].key, "custom_path": path})]
    if len(triggers) <= 1 and not webhooks:
        # No key: a new trigger is keyed 'webhook', a replaced 'cron' one is rekeyed to it.
        return [(tool, {"type": "webhook", "custom_path": path})]
    raise ToolInputError(
        f"Workflow {structure.name or contract.target!r} has several triggers ("
        + ", ".join(t.key for t in triggers)
        + f"); which one receives the hand-off from {contract.source!r} is not clear.",
        code="ambiguous_trigger",
    )


def handoff_calls(structure: Structure, contract: Contract, target_name: str) -> list[ToolCall]:
    """The calls that add to ``structure`` (the contract's source) its hand-off step.

    The step is named ``Hand off to <target_name>``, keyed from that name (both made
    unique in the workflow), uses language-http with the credential
    :data:`HANDOFF_CREDENTIAL`, and runs on success after every terminal step
    (:func:`terminal_steps`); a workflow with no steps gets it from its trigger.
    No calls when a step already hands off to the contract's path. A workflow whose
    own webhook is that path would hand off to itself: ``self_handoff``.
    """
    path = _checked_path(contract.webhook_path)
    if any(t.custom_path == path for t in structure.triggers.values()):
        raise ToolInputError(
            f"Workflow {structure.name or contract.source!r} is the one served at "
            f"{WEBHOOK_PREFIX}{path}; it cannot hand off to itself.",
            code="self_handoff",
        )
    if find_handoff(structure, path) is not None:
        return []
    name = _unique_name(structure, f"Hand off to {sanitise_name(target_name) or contract.target}")
    key = _unique_key(structure, derive_key(name))
    calls: list[ToolCall] = [
        (add_jobs.TOOL.name, {"jobs": [{"key": key, "name": name, "adaptor": HANDOFF_ADAPTOR}]})
    ]
    edges = [
        {"source": step, "target": key, "condition_type": "on_job_success"}
        for step in terminal_steps(structure)
    ]
    if not _work_steps(structure):
        # Nothing runs before the hand-off: a trigger that starts no step starts it.
        edges = [
            {"source": t, "target": key} for t in structure.triggers if not structure.edges_from(t)
        ]
    if edges:
        calls.append((add_edges.TOOL.name, {"edges": edges}))
    calls.append(
        (update_jobs.TOOL.name, {"jobs": [{"key": key, "credential": HANDOFF_CREDENTIAL}]})
    )
    code = handoff_code(contract, target_name)
    edit = {"action": "rewrite", "new_code": code}
    calls.append((CODE_EDIT_TOOL.name, {"job_key": key, "edits": [edit]}))
    return calls


def terminal_steps(structure: Structure) -> list[str]:
    """The steps a successful run ends with: where the hand-off goes.

    A step is terminal when the success path reaches it (from a trigger, or from
    a step nothing leads to when there is no trigger edge) and no edge but a
    failure edge leaves it. So a failure handler (reached only through
    ``on_job_failure``) never hands off, and a step whose only continuation is
    its failure handler does. Hand-off steps are left out: a second contract's
    hand-off runs beside the first, after the same steps. A step behind a
    ``js_expression`` edge counts as a continuation (the run may end before it
    when the condition is false; OpenFn has no "otherwise" to hang a hand-off on).
    """
    work = _work_steps(structure)
    onward: dict[str, list[str]] = {
        key: [
            e.target_job
            for e in structure.edges_from(key)
            if e.condition_type != _FAILURE and e.target_job in work
        ]
        for key in work
    }
    starts = [
        e.target_job
        for t in structure.triggers
        for e in structure.edges_from(t)
        if e.target_job in work
    ]
    if not starts:
        targeted = {e.target_job for e in structure.edges.values() if e.source_job in work}
        starts = [k for k in work if k not in targeted]
    reached: set[str] = set()
    pending = list(starts)
    while pending:
        key = pending.pop()
        if key not in reached:
            reached.add(key)
            pending += onward[key]
    return [k for k in work if k in reached and not onward[k]]


def run_call(
    doc: WorkflowDocument, call: ToolCall, *, context: ToolContext | None = None
) -> ToolResult:
    """Run one call on ``doc``: an ``edit_job_code`` call is applied and stitched
    after the code checks (as the code sub-agent's edits are), every other call
    goes through :func:`~tools.registry.run_tool`."""
    name, args = call
    if name != CODE_EDIT_TOOL.name:
        return run_tool(doc, name, args, context=context)
    ctx = context or default_context()
    rest = dict(args)
    job_key = str(rest.pop("job_key", ""))
    try:
        edits = EditJobCodeArgs.model_validate(rest).edits
        job = doc.structure.jobs.get(job_key)
        if job is None:
            raise ToolInputError(f"There is no step {job_key!r}.", code="unknown_job")
        body = apply_code_edits(
            job.body or "", [CodeEdit(e.action, e.new_code, e.old_code) for e in edits]
        )
    except PlanwrightError as exc:
        return ToolResult.failure(exc.code, exc.message, mutating=True)
    except ValueError as exc:  # pydantic's ValidationError
        return ToolResult.failure("invalid_arguments", str(exc), mutating=True)
    return stitch_job_code(doc, job_key, body, catalogue=ctx.catalogue)


def apply_calls(
    doc: WorkflowDocument, calls: Iterable[ToolCall], *, context: ToolContext | None = None
) -> list[ToolResult]:
    """Run ``calls`` in order on ``doc``, stopping after the first that fails (its
    result is the last one returned; the calls before it stay applied)."""
    results: list[ToolResult] = []
    for call in calls:
        results.append(run_call(doc, call, context=context))
        if not results[-1].ok:
            break
    return results


def _work_steps(structure: Structure) -> list[str]:
    """The steps that are not hand-offs, in document order."""
    return [k for k, job in structure.jobs.items() if handoff_path(job) is None]


def _checked_path(path: str) -> str:
    if not is_valid_key(path):
        raise ToolInputError(
            f"Webhook path {path!r} must be letters, digits, '-' and '_' (at most 100), "
            "starting with a letter or digit.",
            code="invalid_webhook_path",
        )
    return path


def _unique_name(structure: Structure, wanted: str) -> str:
    """``wanted`` as a step name: sanitised, within the length limit, and unique by slug
    (OpenFn derives step ids from names, so names are compared as the validator does)."""
    base = sanitise_name(wanted)[:MAX_NAME_LENGTH].rstrip()
    taken = {derive_key(job.name) for job in structure.jobs.values()}
    name, n = base, 1
    while derive_key(name) in taken:
        n += 1
        suffix = f" {n}"
        name = base[: MAX_NAME_LENGTH - len(suffix)].rstrip() + suffix
    return name


def _unique_key(structure: Structure, wanted: str) -> str:
    taken = set(structure.jobs) | set(structure.triggers)
    key, n = wanted, 1
    while key in taken:
        n += 1
        key = f"{wanted[:90]}-{n}"
    return key


__all__ = [
    "HANDOFF_CREDENTIAL",
    "ToolCall",
    "apply_calls",
    "find_handoff",
    "handoff_calls",
    "handoff_code",
    "handoff_path",
    "receiving_calls",
    "run_call",
    "terminal_steps",
]
