"""update_jobs' ``credential``: a credential's name on a step, set, changed, removed."""

from __future__ import annotations

from tests.tools.helpers import fails, job, ok, yaml_block
from tools.base import ToolContext
from tools.document import WorkflowDocument
from tools.document.redaction import redact, render_structure


def test_set_credential_writes_only_that_field(ctx: ToolContext, doc: WorkflowDocument) -> None:
    before = job(doc, "check-coverage")
    result = ok(
        doc,
        "update_jobs",
        {"jobs": [{"key": "check-coverage", "credential": "  epic-sandbox "}]},
        ctx,
    )
    after = job(doc, "check-coverage")
    assert after.credential == "epic-sandbox"
    assert (after.id, after.name, after.adaptor, after.body) == (
        before.id,
        before.name,
        before.adaptor,
        before.body,
    )
    assert "credential -> 'epic-sandbox'" in result.text
    block = yaml_block(doc.to_yaml(), "jobs", "check-coverage")
    # Canonical order: after the adaptor, before the body.
    assert block.index("adaptor:") < block.index("credential: epic-sandbox") < block.index("body")
    assert WorkflowDocument.from_yaml(doc.to_yaml()).structure.jobs["check-coverage"] == after


def test_credential_shows_in_the_models_view(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ok(doc, "update_jobs", {"jobs": [{"key": "check-coverage", "credential": "epic"}]}, ctx)
    jobs = {j["key"]: j for j in redact(doc.structure)["jobs"]}
    assert jobs["check-coverage"]["credential"] == "epic"
    assert "credential" not in jobs["notify-team"]
    assert "credential 'epic'" in render_structure(doc.structure)


def test_empty_string_removes_it(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ok(doc, "update_jobs", {"jobs": [{"key": "notify-team", "credential": "smtp"}]}, ctx)
    result = ok(doc, "update_jobs", {"jobs": [{"key": "notify-team", "credential": ""}]}, ctx)
    assert job(doc, "notify-team").credential is None
    assert "credential removed" in result.text
    assert "credential" not in yaml_block(doc.to_yaml(), "jobs", "notify-team")


def test_same_credential_is_no_change(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ok(doc, "update_jobs", {"jobs": [{"key": "notify-team", "credential": "smtp"}]}, ctx)
    again = {"jobs": [{"key": "notify-team", "credential": "smtp"}]}
    fails(doc, "update_jobs", again, ctx, "no_change")


def test_multi_line_credential_is_refused_and_nothing_written(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    before = doc.to_yaml()
    fails(
        doc,
        "update_jobs",
        {
            "jobs": [
                {"key": "notify-team", "credential": "smtp"},
                {"key": "check-coverage", "credential": "user\npassword"},
            ]
        },
        ctx,
        "invalid_credential",
    )
    assert doc.to_yaml() == before
