"""Shared builders for the tool unit tests.

Everything goes through :func:`tools.registry.run_tool`, the seam the agents
use, with a deterministic id factory so ids in the YAML are predictable
(``00000000-0000-4000-8000-000000000001``, ``...0002``, ...).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from tools.base import ToolContext, ToolResult
from tools.catalogue.adaptors import load_catalogue
from tools.catalogue.docs_search import DocsIndex
from tools.document import WorkflowDocument
from tools.document.structure import Edge, Job, Trigger
from tools.registry import TOOLS, run_tool

ID_PREFIX = "00000000-0000-4000-8000-"
STANDARD_BODY = "// Add operations here"

Call = tuple[str, Mapping[str, Any]]


def pinned(adaptor: str) -> str:
    """``@openfn/language-http@7.3.2``: what a new step on ``adaptor`` is pinned to (the
    version the adaptor facts list as current)."""
    entry = load_catalogue().get(adaptor)
    assert entry is not None, adaptor
    return entry.pinned


def fake_id(n: int) -> str:
    """The n-th id the counting factory hands out (1-based)."""
    return f"{ID_PREFIX}{n:012d}"


class CountingIds:
    """A ``new_id`` factory: ``fake_id(1)``, ``fake_id(2)``, ... and a record of what it issued."""

    def __init__(self, start: int = 1) -> None:
        self._counter = itertools.count(start)
        self.issued: list[str] = []

    def __call__(self) -> str:
        value = fake_id(next(self._counter))
        self.issued.append(value)
        return value


@functools.cache
def shared_docs_index() -> DocsIndex:
    """One documentation index for the whole test session (building it takes a moment)."""
    return DocsIndex.build(load_catalogue())


def make_context(start: int = 1) -> ToolContext:
    return ToolContext(new_id=CountingIds(start), docs_loader=shared_docs_index)


# --------------------------------------------------------------------------- calling tools


def call(
    doc: WorkflowDocument,
    tool: str,
    args: Mapping[str, Any],
    ctx: ToolContext,
    *,
    read_only: bool = False,
) -> ToolResult:
    return run_tool(doc, tool, args, read_only=read_only, context=ctx)


def ok(doc: WorkflowDocument, tool: str, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Run a call that must succeed; return its result."""
    result = call(doc, tool, args, ctx)
    assert result.ok is True, result.text
    assert result.error_code is None
    if TOOLS[tool].structural:
        assert result.changes, f"{tool} succeeded without reporting a change"
        assert result.structure is not None
    return result


def fails(
    doc: WorkflowDocument,
    tool: str,
    args: Mapping[str, Any],
    ctx: ToolContext,
    code: str,
    *,
    read_only: bool = False,
) -> ToolResult:
    """Run a call that must fail with ``code`` and leave the document byte-identical."""
    before = doc.to_yaml()
    structure_before = doc.structure
    result = call(doc, tool, args, ctx, read_only=read_only)
    assert result.ok is False, result.text
    assert result.error_code == code, result.text
    assert result.text.startswith(f"Error ({code}): "), result.text
    spec = TOOLS.get(tool)
    if spec is not None and spec.mutating:
        assert "was not changed" in result.text, result.text
    assert result.changes == []
    assert result.structure is None
    assert doc.to_yaml() == before
    assert doc.structure is structure_before
    return result


def build(calls: Iterable[Call], ctx: ToolContext, name: str | None = None) -> WorkflowDocument:
    """A fresh document built by a sequence of successful tool calls."""
    doc = WorkflowDocument.new(name)
    for tool, args in calls:
        ok(doc, tool, args, ctx)
    return doc


def referral_doc(ctx: ToolContext) -> WorkflowDocument:
    """webhook -> fetch-referrals -> check-coverage -> notify-team (on failure).

    Ids: jobs 1-3, trigger 4, edges 5 (fetch->check), 6 (check->notify), 7 (webhook->fetch).
    """
    return build(
        [
            (
                "create_workflow",
                {
                    "name": "Referral intake",
                    "jobs": [
                        {"name": "Fetch referrals", "adaptor": "http"},
                        {"name": "Check coverage", "adaptor": "fhir"},
                        {"name": "Notify team", "adaptor": "gmail"},
                    ],
                    "edges": [
                        {"source": "fetch-referrals", "target": "check-coverage"},
                        {
                            "source": "check-coverage",
                            "target": "notify-team",
                            "condition_type": "on_job_failure",
                        },
                    ],
                    "trigger": {"type": "webhook"},
                },
            )
        ],
        ctx,
    )


def loose_jobs_doc(ctx: ToolContext, *, trigger: bool = True) -> WorkflowDocument:
    """Three unconnected steps (extract, transform, load) and, optionally, an unconnected
    webhook trigger. Ids: jobs 1-3, trigger 4."""
    calls: list[Call] = [
        (
            "add_jobs",
            {
                "jobs": [
                    {"name": "Extract", "adaptor": "http"},
                    {"name": "Transform", "adaptor": "common"},
                    {"name": "Load", "adaptor": "postgresql"},
                ]
            },
        )
    ]
    if trigger:
        calls.append(("set_trigger", {"type": "webhook"}))
    return build(calls, ctx)


# --------------------------------------------------------------------------- lookups


def job(doc: WorkflowDocument, key: str) -> Job:
    return doc.structure.jobs[key]


def trigger(doc: WorkflowDocument, key: str) -> Trigger:
    return doc.structure.triggers[key]


def edge(doc: WorkflowDocument, source: str, target: str) -> Edge:
    found = doc.structure.find_edge(source, target)
    assert found is not None, f"no edge {source} -> {target}"
    return found


def edge_pairs(doc: WorkflowDocument) -> set[tuple[str, str]]:
    return {(e.source, e.target_job) for e in doc.structure.edges.values()}


def edge_ids(doc: WorkflowDocument) -> dict[str, str | None]:
    """Edge key -> id."""
    return {k: e.id for k, e in doc.structure.edges.items()}


def changes(result: ToolResult) -> list[tuple[str, str, str]]:
    return [(c.action, c.kind, c.key) for c in result.changes]


def fresh(doc: WorkflowDocument) -> WorkflowDocument:
    """Reload the emitted YAML: what a later request would see."""
    return WorkflowDocument.from_yaml(doc.to_yaml())


# --------------------------------------------------------------------------- YAML fixtures

# A Lightning-style export: comments everywhere, unknown fields at the top level, on a
# job, on the trigger and on an edge, single- and double-quoted strings, a pinned
# adaptor, real job code, and an edge whose key is not the conventional "source->target".
FIXTURE_YAML = """\
# Referral intake: imported from Lightning
name: "Referral intake"
project_id: 4adf2644-ed4e-4f97-a24c-ab35b3cb1efa   # unknown top-level field
concurrency: 2
jobs:
  # Pull referrals from the intake API
  fetch-referrals:
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a1111
    name: 'Fetch referrals'
    adaptor: '@openfn/language-http@6.5.1'   # pinned on purpose
    project_credential_id: cred-0001
    body: |
      // Pull new referrals since the cursor
      get('/referrals', { query: { since: $.cursor } });
      fn(state => {
        state.referrals = state.data.items.filter(r => r.status === "new");
        return state;
      });
  check-coverage:
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a2222
    name: Check coverage                # display name
    adaptor: '@openfn/language-fhir@latest'
    body: |
      get('Coverage', { query: { patient: $.patientId } });
  notify-team:
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a3333
    name: Notify team
    adaptor: "@openfn/language-gmail@latest"
    body: // Add operations here
triggers:
  webhook:
    id: 0a9b8c7d-6e5f-4d3c-2b1a-0c3f8f0a4444
    type: webhook                       # webhook | cron
    enabled: false
    webhook_reply: after_completion
    custom_path: 'referrals/intake'
    has_auth_method: true
edges:
  webhook->fetch-referrals:
    id: 11111111-2222-4333-8444-555555555555
    source_trigger: webhook
    target_job: fetch-referrals
    condition_type: always
    enabled: true
  fetch-referrals->check-coverage:
    id: 11111111-2222-4333-8444-666666666666
    source_job: fetch-referrals
    target_job: check-coverage
    condition_type: js_expression
    condition_expression: 'state.referrals.length > 0'
    condition_label: "Has referrals"
    enabled: true
    ui_hint: curved                     # unknown edge field
  coverage-failed:
    id: 11111111-2222-4333-8444-777777777777
    source_job: check-coverage
    target_job: notify-team
    condition_type: on_job_failure
    enabled: true
"""

FIXTURE_JOB_IDS = {
    "fetch-referrals": "7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a1111",
    "check-coverage": "7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a2222",
    "notify-team": "7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a3333",
}
FIXTURE_TRIGGER_ID = "0a9b8c7d-6e5f-4d3c-2b1a-0c3f8f0a4444"
FIXTURE_EDGE_IDS = {
    "webhook->fetch-referrals": "11111111-2222-4333-8444-555555555555",
    "fetch-referrals->check-coverage": "11111111-2222-4333-8444-666666666666",
    "coverage-failed": "11111111-2222-4333-8444-777777777777",
}
FIXTURE_FETCH_BODY = (
    "// Pull new referrals since the cursor\n"
    "get('/referrals', { query: { since: $.cursor } });\n"
    "fn(state => {\n"
    '  state.referrals = state.data.items.filter(r => r.status === "new");\n'
    "  return state;\n"
    "});\n"
)


def fixture_doc() -> WorkflowDocument:
    return WorkflowDocument.from_yaml(FIXTURE_YAML)


def yaml_block(text: str, section: str, key: str) -> str:
    """The exact lines of one entry (``  key:`` and its indented body) in emitted YAML."""
    lines = text.splitlines(keepends=True)
    start = lines.index(f"{section}:\n")
    out: list[str] = []
    for line in lines[start + 1 :]:
        if out:
            if not line.startswith("    "):
                break
            out.append(line)
        elif line == f"  {key}:\n" or line.startswith(f"  {key}: "):
            out.append(line)
        elif not line.startswith(" "):
            break
    assert out, f"{section}.{key} not found"
    return "".join(out)
