"""How an offline-model test case is written and checked.

A :class:`Case` is one request on a sample workflow (:mod:`.documents`) and what
must come of it: the tool calls, the steps, edges and trigger that result, and
what the answer says. A rule's :class:`~agents.offline.rules.Example` is
checked the same way, and must be answered by that rule.

The cases are data: ``data/<area>.yaml``, a list of cases, each a mapping::

    - id: build-sentence              # unique over every file: it names the test
      doc: empty                      # the sample workflow (documents.DOCS)
      text: create a workflow that ...
      options: {page: job, job_key: send-email}   # run_turn's keyword arguments
      calls:                          # the tool calls in order, each with a subset of
      - create_workflow: {name: X}    # its arguments ([] : none; absent: not checked)
      jobs: {get-referrals: [Get referrals, http]}  # key: [name, adaptor], all of them
      edges:                          # every edge, "source -> target": its condition
        webhook -> get-referrals: always
        check -> submit: {guarded: "state.data.plan === 'HMO'", label: HMO}
        check -> other: {js: "state.data.x", label: x}   # written as is, no guard
      trigger: {type: cron, cron: 0 7 * * 1-5, enabled: false}
      says: [Created the workflow]    # fragments of the answer (any case)
      never_says: [...]
      unchanged: true                 # the document is exactly as it was

``guarded`` is a JS edge behind the runtime's success guard (``ok_and``); any other
mapping is the edge's fields as they are.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from ruamel.yaml import YAML

from agents.models.base import ModelRequest, RequestContext
from agents.offline import OfflineModel
from agents.offline.planner import plan
from agents.offline.rules import TRACE, Example, Rule
from tests.agents.offline.documents import DOCS, js, ok_and
from tests.agents.offline.harness import run_turn
from tools.catalogue.names import adaptor_short_name
from tools.document import WorkflowDocument
from tools.document.redaction import redact
from tools.jobcode import check_job_code
from tools.registry import MUTATING_TOOLS


@dataclass(frozen=True)
class Case:
    id: str
    doc: str
    text: str
    calls: tuple[tuple[str, dict[str, Any]], ...] | None = None
    jobs: dict[str, tuple[str, str]] | None = None
    edges: dict[tuple[str, str], Any] | None = None
    trigger: tuple[str, str | None, bool] | None = None
    says: tuple[str, ...] = ()
    never_says: tuple[str, ...] = ()
    unchanged: bool = False
    options: dict[str, Any] = field(default_factory=dict)


DATA = Path(__file__).parent / "data"
_KEYS = {
    "id",
    "doc",
    "text",
    "options",
    "calls",
    "jobs",
    "edges",
    "trigger",
    "says",
    "never_says",
    "unchanged",
}


def _edge(value: Any) -> Any:
    if isinstance(value, str):
        return value
    value = dict(value)
    if "guarded" in value:
        return js(ok_and(value.pop("guarded")), value.pop("label", None))
    if "js" in value:
        return js(value.pop("js"), value.pop("label", None))
    return value


def _case(raw: dict[str, Any]) -> Case:
    unknown = set(raw) - _KEYS
    assert not unknown, (raw.get("id"), sorted(unknown))
    calls = raw.get("calls")
    jobs = raw.get("jobs")
    edges = raw.get("edges")
    trigger = raw.get("trigger")
    return Case(
        id=raw["id"],
        doc=raw["doc"],
        text=raw["text"],
        calls=None
        if calls is None
        else tuple((name, args) for call in calls for name, args in call.items()),
        jobs=None if jobs is None else {k: (v[0], v[1]) for k, v in jobs.items()},
        edges=None
        if edges is None
        else {
            (pair.split(" -> ")[0], pair.split(" -> ")[1]): _edge(v) for pair, v in edges.items()
        },
        trigger=None if trigger is None else (trigger["type"], trigger["cron"], trigger["enabled"]),
        says=tuple(raw.get("says", ())),
        never_says=tuple(raw.get("never_says", ())),
        unchanged=bool(raw.get("unchanged", False)),
        options=dict(raw.get("options", {})),
    )


def load_cases(*areas: str) -> list[Case]:
    """The cases of ``data/<area>.yaml`` (every file without ``areas``), in file order."""
    paths = [DATA / f"{area}.yaml" for area in areas] or sorted(DATA.glob("*.yaml"))
    yaml = YAML(typ="safe", pure=True)
    return [_case(raw) for path in paths for raw in yaml.load(path.read_text(encoding="utf-8"))]


def _subset(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _subset(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(_subset(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return bool(expected == actual)


def _jobs(doc: WorkflowDocument) -> dict[str, tuple[str, str]]:
    return {k: (j.name, adaptor_short_name(j.adaptor)) for k, j in doc.structure.jobs.items()}


def _edges(doc: WorkflowDocument) -> dict[tuple[str, str], dict[str, Any]]:
    result: dict[tuple[str, str], dict[str, Any]] = {}
    for edge in doc.structure.edges.values():
        value: dict[str, Any] = {"condition_type": edge.condition_type}
        if edge.condition_expression is not None:
            value["condition_expression"] = edge.condition_expression
        if edge.condition_label:
            value["condition_label"] = edge.condition_label
        if not edge.enabled:
            value["enabled"] = False
        result[(edge.source, edge.target_job)] = value
    return result


def _expected_edges(edges: dict[tuple[str, str], Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        pair: ({"condition_type": v} if isinstance(v, str) else dict(v))
        for pair, v in edges.items()
    }


def _trigger(doc: WorkflowDocument) -> tuple[str, str | None, bool] | None:
    triggers = list(doc.structure.triggers.values())
    assert len(triggers) <= 1
    if not triggers:
        return None
    t = triggers[0]
    return (t.type, t.cron_expression, t.enabled)


def check_case(case: Case) -> None:
    """The case's request, through the real graph, does what the case says."""
    doc = DOCS[case.doc]()
    before = doc.to_yaml()
    outcome = run_turn(doc, case.text, **case.options)
    names = [name for name, _ in outcome.tool_calls]
    if case.calls is not None:
        assert names == [name for name, _ in case.calls], outcome.final_text
        for (_, expected), (_, actual) in zip(case.calls, outcome.tool_calls, strict=True):
            assert _subset(expected, actual), (expected, actual)
    if case.unchanged:
        assert outcome.doc.to_yaml() == before
    if case.jobs is not None:
        assert _jobs(outcome.doc) == case.jobs
    if case.edges is not None:
        assert _edges(outcome.doc) == _expected_edges(case.edges)
    if case.trigger is not None:
        assert _trigger(outcome.doc) == case.trigger
    for fragment in case.says:
        assert fragment.lower() in outcome.final_text.lower(), outcome.final_text
    for fragment in case.never_says:
        assert fragment.lower() not in outcome.final_text.lower(), outcome.final_text
    assert outcome.final_text.strip()
    for name, args in outcome.tool_calls:
        if name == "edit_job_code":
            for edit in args["edits"]:
                assert check_job_code(edit["new_code"]) == []


def check_read_only(case: Case) -> None:
    """In a read-only session the same request never calls a changing tool."""
    doc = DOCS[case.doc]()
    before = doc.to_yaml()
    options = {k: v for k, v in case.options.items() if k != "read_only"}
    outcome = run_turn(doc, case.text, read_only=True, **options)
    mutating = [n for n, _ in outcome.tool_calls if n in MUTATING_TOOLS or n == "edit_job_code"]
    assert mutating == [], (case.id, mutating)
    assert doc.to_yaml() == before, case.id


def example_params(rules: Iterable[Rule]) -> list[Any]:
    """One test per phrasing of every example of ``rules``."""
    return [
        pytest.param(rule, example, text, id=f"{rule.name}:{' '.join(text.split())[:60]}")
        for rule in rules
        for example in rule.examples
        for text in example.texts
    ]


def check_example(rule: Rule, example: Example, text: str) -> None:
    """The example does what it says (the tools it calls, the cron, the answer) and is
    answered by its own rule."""
    doc = DOCS[example.doc]()
    before = doc.to_yaml()
    page: Literal["workflow", "job"] = "job" if example.job_key else "workflow"
    outcome = run_turn(doc, text, page=page, job_key=example.job_key)
    assert tuple(name for name, _ in outcome.tool_calls) == example.tools, outcome.final_text
    changing = [n for n in example.tools if n in MUTATING_TOOLS or n == "edit_job_code"]
    if not changing:
        assert outcome.doc.to_yaml() == before
    if example.cron is not None:
        trigger = _trigger(outcome.doc)
        assert trigger is not None and trigger[1] == example.cron, trigger
    for fragment in example.says:
        assert fragment.lower() in outcome.final_text.lower(), outcome.final_text
    assert outcome.final_text.strip()
    trace: list[str] = []
    token = TRACE.set(trace)
    try:
        context = RequestContext(
            user_text=text, structure=redact(doc.structure), page=page, job_key=example.job_key
        )
        plan(context)
    finally:
        TRACE.reset(token)
    assert rule.name in trace, trace


def ask(request: ModelRequest) -> Any:
    return asyncio.run(OfflineModel().create(request))
