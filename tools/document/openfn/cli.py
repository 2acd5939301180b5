"""The CLI's ``workflow.json``: the workflow form ``@openfn/runtime`` executes.

Shape (``@openfn/lexicon``'s ``WorkflowSpec``, what ``@openfn/cli`` loads from
a file with ``steps``)::

    {"id": "referral-intake", "name": "Referral intake", "start": "webhook",
     "steps": [
       {"id": "webhook", "type": "webhook", "enabled": false,
        "next": {"check-coverage": {"condition": "always", "disabled": false}}},
       {"id": "check-coverage", "name": "Check coverage",
        "adaptors": ["@openfn/language-fhir@latest"],
        "expression": "get('Coverage');", "configuration": "my-fhir-credential",
        "next": {"notify": {
          "condition": "!state.errors?.[upstreamStepId] && (state.data.ok)",
          "disabled": false, "label": "covered"}}}]}

Step ids are OpenFn's (:mod:`tools.document.openfn.ids`). Triggers are steps
without an expression, listed first; ``start`` is the first trigger, or the
first step no edge leads to. Every edge carries its ``condition``: the runtime
follows an edge object without one never, and turns ``always``,
``on_job_success`` and ``on_job_failure`` into JavaScript itself; a
``js_expression`` goes out as its expression, trimmed (the runtime compiles
``return <expression>``, so a leading line break would return nothing).
A disabled edge keeps ``disabled: true``. ``configuration`` is the step's
credential *name*; the CLI resolves it through its credential map, and the
runtime through its ``resolveCredential`` callback.
"""

from __future__ import annotations

from typing import Any

from tools.document import WorkflowDocument
from tools.document.openfn.context import document_step_ids
from tools.document.openfn.ids import export_body
from tools.document.openfn.parts import edge_ends, js_condition, trigger_fields


def to_cli_workflow(doc: WorkflowDocument) -> dict[str, Any]:
    """``doc`` as a CLI ``workflow.json`` object (``json.dumps`` it to write the file).

    Raises :class:`~tools.errors.DocumentError` (with ``field``) when the
    document cannot be expressed for OpenFn: two parts that would get one step
    id, an edge or cron cursor that points nowhere, a js_expression edge with
    no expression.
    """
    structure = doc.structure
    ids = document_step_ids(doc)
    steps: dict[str, dict[str, Any]] = {}
    for key, trigger in structure.triggers.items():
        steps[key] = {"id": ids.triggers[key], **trigger_fields(structure, trigger, ids)}
    for key, job in structure.jobs.items():
        step: dict[str, Any] = {
            "id": ids.jobs[key],
            "name": job.name,
            "adaptors": [job.adaptor],
            "expression": export_body(job.body),
        }
        if job.credential:
            step["configuration"] = job.credential
        steps[key] = step
    targeted: set[str] = set()
    for edge in structure.edges.values():
        source, target = edge_ends(structure, edge)
        targeted.add(target)
        condition = (
            js_condition(edge).strip()
            if edge.condition_type == "js_expression"
            else edge.condition_type
        )
        rule: dict[str, Any] = {"condition": condition, "disabled": not edge.enabled}
        if edge.condition_label:
            rule["label"] = edge.condition_label
        steps[source].setdefault("next", {})[ids.jobs[target]] = rule
    workflow: dict[str, Any] = {"id": ids.workflow}
    if structure.name is not None:
        workflow["name"] = structure.name
    start = next(iter(ids.triggers.values()), None)
    if start is None:
        start = next((ids.jobs[k] for k in structure.jobs if k not in targeted), None)
    if start is not None:
        workflow["start"] = start
    workflow["steps"] = list(steps.values())
    return workflow
