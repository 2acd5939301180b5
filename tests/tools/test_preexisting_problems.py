"""Problems a document arrives with never block unrelated edits, even under a new key."""

from __future__ import annotations

from tools.document import WorkflowDocument
from tools.jobcode.stitch import stitch_job_code
from tools.registry import run_tool

IMPORTED = """\
jobs:
  old:
    id: 00000000-0000-4000-8000-000000000001
    name: Old
    adaptor: '@openfn/language-notinthecatalogue@latest'
  other:
    id: 00000000-0000-4000-8000-000000000002
    name: Other
    adaptor: '@openfn/language-http@latest'
"""


def test_renaming_the_key_of_a_step_with_an_unknown_adaptor_is_allowed() -> None:
    doc = WorkflowDocument.from_yaml(IMPORTED)
    result = run_tool(doc, "update_jobs", {"jobs": [{"key": "old", "new_key": "renamed"}]})
    assert result.ok, result.text
    assert list(doc.structure.jobs) == ["renamed", "other"]


def test_a_new_problem_is_still_refused() -> None:
    doc = WorkflowDocument.from_yaml(IMPORTED)
    result = run_tool(
        doc, "update_jobs", {"jobs": [{"key": "other", "adaptor": "notinthecatalogue"}]}
    )
    assert not result.ok and result.error_code == "unknown_adaptor"
    assert doc.to_yaml() == IMPORTED


def test_code_that_would_exceed_the_size_limit_is_refused() -> None:
    doc = WorkflowDocument.from_yaml(IMPORTED, max_bytes=2048)
    body = "fn(state => state);\n" + "// padding\n" * 300
    result = stitch_job_code(doc, "other", body)
    assert not result.ok and result.error_code == "document_too_large"
    assert doc.to_yaml() == IMPORTED
