"""Counting jobs and edges from the raw text (tools/document/limits.py): the same
numbers the parsed document has, for block-style YAML of every shape the counter
reads; nothing (``None``) where it cannot read them; a refusal over a limit."""

from __future__ import annotations

import json

import pytest

from tests.documents import CODED_REFERRAL_DOC, REFERRAL_DOC, REFERRAL_PROJECT
from tools.document import WorkflowDocument
from tools.document.limits import (
    Counts,
    DocumentLimits,
    _count_json,
    _count_yaml,
    check_text,
)
from tools.document.openfn import from_lightning_yaml
from tools.errors import DocumentError

TRICKY = """\
# a comment at the top
name: "Tricky"   # trailing comment
'jobs':
    # a comment at the jobs' indentation is no job
    first:
        name: First
        adaptor: '@openfn/language-common@latest'
        body: |
          first:
            second: not a job
          third: nor this
    "second step":
        name: Second
        adaptor: '@openfn/language-common@latest'
        body: >-
          folded text
          over lines

    third: {name: Third, adaptor: '@openfn/language-http@latest'}
triggers:
  webhook: {type: webhook}
edges:
  webhook->first: {source_trigger: webhook, target_job: first}
  first->second step:
    source_job: first
    target_job: second step
"""


def _parsed(text: str) -> Counts:
    structure = WorkflowDocument.from_yaml(text).structure
    return Counts(len(structure.jobs), len(structure.edges))


@pytest.mark.parametrize(
    "text", [REFERRAL_DOC, CODED_REFERRAL_DOC, TRICKY, "name: Empty\n", "", "# nothing\n"]
)
def test_block_yaml_counts_match_the_parsed_document(text: str) -> None:
    assert _count_yaml(text, lightning=False) == _parsed(text)


def test_a_lightning_project_counts_every_workflow() -> None:
    docs = from_lightning_yaml(REFERRAL_PROJECT, new_id=lambda: "x")
    expected = Counts(
        sum(len(d.structure.jobs) for d in docs), sum(len(d.structure.edges) for d in docs)
    )
    assert expected.jobs > 0
    assert _count_yaml(REFERRAL_PROJECT, lightning=True) == expected


def test_flow_style_sections_are_not_counted_from_the_text() -> None:
    flow = "name: F\njobs: {a: {name: A}, b: {name: B}}\n"
    assert _count_yaml(flow, lightning=False) is None
    split_flow = "name: F\njobs: {\n  a: {name: A},\n  b: {name: B}\n}\n"
    assert _count_yaml(split_flow, lightning=False) is None


def test_a_cli_workflow_counts_steps_and_their_next() -> None:
    workflow = {
        "workflow": {
            "steps": [
                {"id": "a", "expression": "x", "next": {"b": True, "c": True}},
                {"id": "b", "expression": "x", "next": "c"},
                {"id": "c", "expression": "x"},
            ]
        }
    }
    assert _count_json(json.dumps(workflow)) == Counts(jobs=3, edges=3)
    assert _count_json("{not json") is None


def _jobs(n: int) -> str:
    lines = ["name: Big", "jobs:"]
    for i in range(n):
        lines += [
            f"  job-{i}:",
            f"    name: Job {i}",
            "    adaptor: '@openfn/language-common@latest'",
        ]
    return "\n".join(lines) + "\n"


def test_over_the_limits_is_refused_with_a_stable_code() -> None:
    limits = DocumentLimits(max_bytes=1 << 20, max_jobs=10, max_edges=1)
    check_text(_jobs(10), "yaml", limits)
    with pytest.raises(DocumentError) as refused:
        check_text(_jobs(11), "yaml", limits)
    assert refused.value.code == "too_many_jobs"
    assert "11 jobs" in refused.value.message and "10" in refused.value.message
    with pytest.raises(DocumentError) as edges:
        check_text(REFERRAL_PROJECT, "lightning", limits)
    assert edges.value.code == "too_many_edges"
    with pytest.raises(DocumentError) as size:
        check_text(_jobs(11), "yaml", DocumentLimits(max_bytes=100))
    assert size.value.code == "document_too_large"


@pytest.mark.parametrize("value", ["5", "true", "abc", "'text'", "1.5"])
@pytest.mark.parametrize("section", ["jobs", "edges"])
def test_a_section_that_is_not_a_collection_is_left_to_the_importer(
    section: str, value: str
) -> None:
    """``jobs: 5`` holds no jobs to count: the check lets it through (the importer
    refuses it naming the field) instead of failing on it, in every YAML format."""
    limits = DocumentLimits(max_bytes=1 << 20, max_jobs=0, max_edges=0)
    check_text(f"name: x\n{section}: {value}\n", "yaml", limits)
    project = f"name: P\nworkflows:\n  wf:\n    name: WF\n    {section}: {value}\n"
    check_text(project, "lightning", limits)
