"""update_jobs and remove_jobs through run_tool: cascades, pins, error codes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tools.helpers import (
    FIXTURE_EDGE_IDS,
    FIXTURE_FETCH_BODY,
    FIXTURE_JOB_IDS,
    build,
    changes,
    edge,
    edge_ids,
    edge_pairs,
    fails,
    fake_id,
    fixture_doc,
    job,
    make_context,
    ok,
    referral_doc,
    yaml_block,
)
from tests.tools.helpers import (
    pinned as pinned_to,
)
from tools.base import ToolContext
from tools.document import WorkflowDocument

# =========================================================================== update_jobs


def test_rename_display_name(ctx: ToolContext, doc: WorkflowDocument) -> None:
    before = job(doc, "check-coverage")
    result = ok(doc, "update_jobs", {"jobs": [{"key": "check-coverage", "name": "Vérifier"}]}, ctx)
    after = job(doc, "check-coverage")
    assert after.name == "Verifier"
    assert (after.id, after.adaptor, after.body) == (before.id, before.adaptor, before.body)
    assert changes(result) == [("updated", "job", "check-coverage")]
    assert edge_pairs(doc) == edge_pairs(referral_doc(make_context()))


@pytest.mark.parametrize(
    ("key", "name", "code"),
    [
        ("check-coverage", "notify TEAM", "duplicate_job_name"),  # another step's name
        ("notify-team", "x" * 150, "name_too_long"),
    ],
)
def test_rename_errors(
    ctx: ToolContext, doc: WorkflowDocument, key: str, name: str, code: str
) -> None:
    fails(doc, "update_jobs", {"jobs": [{"key": key, "name": name}]}, ctx, code)


@pytest.fixture
def pinned(ctx: ToolContext) -> WorkflowDocument:
    return build([("add_jobs", {"jobs": [{"name": "Fetch", "adaptor": "http@6.5.1"}]})], ctx)


@pytest.mark.parametrize("given", ["http", "@openfn/language-http", "language-http"])
def test_same_package_without_version_keeps_pin(
    ctx: ToolContext, pinned: WorkflowDocument, given: str
) -> None:
    ok(
        pinned,
        "update_jobs",
        {"jobs": [{"key": "fetch", "name": "Fetch all", "adaptor": given}]},
        ctx,
    )
    assert job(pinned, "fetch").adaptor == "@openfn/language-http@6.5.1"
    assert job(pinned, "fetch").name == "Fetch all"
    fails(pinned, "update_jobs", {"jobs": [{"key": "fetch", "adaptor": given}]}, ctx, "no_change")


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("http@7.2.10", "@openfn/language-http@7.2.10"),
        ("http@latest", "@openfn/language-http@latest"),
        ("fhir", pinned_to("fhir")),
        ("fhir@5.0.15", "@openfn/language-fhir@5.0.15"),
    ],
)
def test_adaptor_change_with_version_or_other_package(
    ctx: ToolContext, pinned: WorkflowDocument, given: str, stored: str
) -> None:
    result = ok(pinned, "update_jobs", {"jobs": [{"key": "fetch", "adaptor": given}]}, ctx)
    assert job(pinned, "fetch").adaptor == stored
    assert job(pinned, "fetch").id == fake_id(1)
    assert changes(result) == [("updated", "job", "fetch")]


@pytest.mark.parametrize(
    ("adaptor", "code"), [("htp", "unknown_adaptor"), ("http@7", "invalid_adaptor_version")]
)
def test_update_adaptor_errors(
    ctx: ToolContext, pinned: WorkflowDocument, adaptor: str, code: str
) -> None:
    fails(pinned, "update_jobs", {"jobs": [{"key": "fetch", "adaptor": adaptor}]}, ctx, code)


def test_new_key_cascades_to_edges(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ids_before = {e.id: (e.source, e.target_job) for e in doc.structure.edges.values()}
    job_before = job(doc, "check-coverage")
    result = ok(doc, "update_jobs", {"jobs": [{"key": "check-coverage", "new_key": "verify"}]}, ctx)
    assert list(doc.structure.jobs) == ["fetch-referrals", "verify", "notify-team"]
    moved = job(doc, "verify")
    assert (moved.id, moved.name, moved.body, moved.adaptor) == (
        job_before.id,
        job_before.name,
        job_before.body,
        job_before.adaptor,
    )
    assert set(doc.structure.edges) == {
        "fetch-referrals->verify",
        "verify->notify-team",
        "webhook->fetch-referrals",
    }
    assert edge(doc, "fetch-referrals", "verify").target_job == "verify"
    assert edge(doc, "verify", "notify-team").source_job == "verify"
    rename = {"check-coverage": "verify"}
    ids_after = {e.id: (e.source, e.target_job) for e in doc.structure.edges.values()}
    assert ids_after == {
        i: (rename.get(s, s), rename.get(t, t)) for i, (s, t) in ids_before.items()
    }
    assert ("renamed", "job", "verify") in changes(result)
    assert "check-coverage" not in doc.to_yaml()


def test_new_key_keeps_unconventional_edge_key_and_code() -> None:
    ctx = make_context()
    doc = fixture_doc()
    ok(doc, "update_jobs", {"jobs": [{"key": "check-coverage", "new_key": "coverage"}]}, ctx)
    assert edge_ids(doc) == {
        "webhook->fetch-referrals": FIXTURE_EDGE_IDS["webhook->fetch-referrals"],
        "fetch-referrals->coverage": FIXTURE_EDGE_IDS["fetch-referrals->check-coverage"],
        "coverage-failed": FIXTURE_EDGE_IDS["coverage-failed"],
    }
    assert edge(doc, "coverage", "notify-team").key == "coverage-failed"
    assert job(doc, "coverage").id == FIXTURE_JOB_IDS["check-coverage"]
    assert job(doc, "fetch-referrals").body == FIXTURE_FETCH_BODY
    text = doc.to_yaml()
    assert "    ui_hint: curved                     # unknown edge field\n" in text
    assert "    project_credential_id: cred-0001\n" in text


def test_new_key_keeps_cron_cursor_by_id(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ok(
        doc,
        "set_trigger",
        {"type": "cron", "cron_expression": "0 * * * *", "cron_cursor_job": "check-coverage"},
        ctx,
    )
    cursor = doc.structure.triggers["cron"].cron_cursor_job_id
    result = ok(doc, "update_jobs", {"jobs": [{"key": "check-coverage", "new_key": "cov"}]}, ctx)
    assert doc.structure.triggers["cron"].cron_cursor_job_id == cursor == job(doc, "cov").id
    assert result.structure is not None
    assert result.structure["triggers"][0]["cron_cursor_job"] == "cov"


@pytest.mark.parametrize(
    ("new_key", "code"),
    [
        ("notify-team", "duplicate_job_key"),
        ("bad key", "invalid_key"),
        ("webhook", "node_key_clash"),
    ],
)
def test_new_key_errors(ctx: ToolContext, doc: WorkflowDocument, new_key: str, code: str) -> None:
    fails(doc, "update_jobs", {"jobs": [{"key": "check-coverage", "new_key": new_key}]}, ctx, code)


def test_unknown_key_has_did_you_mean_and_key_list(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc, "update_jobs", {"jobs": [{"key": "check-coverag", "name": "X"}]}, ctx, "unknown_job"
    )
    assert "Did you mean 'check-coverage'?" in result.text
    assert "Steps: fetch-referrals, check-coverage, notify-team." in result.text


def test_display_name_as_key_gives_hint(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc, "update_jobs", {"jobs": [{"key": "Check Coverage", "name": "X"}]}, ctx, "unknown_job"
    )
    assert "is the display name of step 'check-coverage'; use the key" in result.text


@pytest.mark.parametrize(
    "item",
    [
        {"key": "check-coverage"},
        {"key": "check-coverage", "name": "Check coverage"},
        {"key": "check-coverage", "new_key": "check-coverage"},
        {"key": "check-coverage", "adaptor": "fhir"},
        {
            "key": "check-coverage",
            "name": "  Check   coverage ",
            "adaptor": "@openfn/language-fhir",
        },
    ],
)
def test_update_no_change(ctx: ToolContext, doc: WorkflowDocument, item: Any) -> None:
    fails(doc, "update_jobs", {"jobs": [item]}, ctx, "no_change")


def test_update_batch_is_all_or_nothing(ctx: ToolContext, doc: WorkflowDocument) -> None:
    items = [{"key": "fetch-referrals", "name": "Fetch all"}, {"key": "nope", "name": "X"}]
    fails(doc, "update_jobs", {"jobs": items}, ctx, "unknown_job")
    assert job(doc, "fetch-referrals").name == "Fetch referrals"


@pytest.mark.parametrize("field", ["id", "body"])
def test_update_jobs_refuses_id_and_body(
    ctx: ToolContext, doc: WorkflowDocument, field: str
) -> None:
    result = fails(
        doc, "update_jobs", {"jobs": [{"key": "notify-team", field: "x"}]}, ctx, "invalid_arguments"
    )
    assert "managed by the server" in result.text


# =========================================================================== remove_jobs


def test_remove_cascades_edges(ctx: ToolContext, doc: WorkflowDocument) -> None:
    kept_id = edge(doc, "webhook", "fetch-referrals").id
    result = ok(doc, "remove_jobs", {"keys": ["check-coverage"]}, ctx)
    assert list(doc.structure.jobs) == ["fetch-referrals", "notify-team"]
    assert edge_ids(doc) == {"webhook->fetch-referrals": kept_id}
    assert sorted(changes(result)) == sorted(
        [
            ("removed", "edge", "fetch-referrals->check-coverage"),
            ("removed", "edge", "check-coverage->notify-team"),
            ("removed", "job", "check-coverage"),
        ]
    )
    assert "Now without an incoming edge: notify-team" in result.text
    assert "held code" not in result.text


def test_remove_clears_cron_cursor_of_removed_job(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ok(
        doc,
        "set_trigger",
        {"type": "cron", "cron_expression": "0 * * * *", "cron_cursor_job": "notify-team"},
        ctx,
    )
    assert "cron_cursor_job_id" in doc.to_yaml()
    result = ok(doc, "remove_jobs", {"keys": ["notify-team"]}, ctx)
    assert doc.structure.triggers["cron"].cron_cursor_job_id is None
    assert "cron_cursor_job_id" not in doc.to_yaml()
    assert "cron cursor of cron cleared" in result.text


def test_remove_keeps_cursor_of_other_job(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ok(
        doc,
        "set_trigger",
        {"type": "cron", "cron_expression": "0 * * * *", "cron_cursor_job": "fetch-referrals"},
        ctx,
    )
    ok(doc, "remove_jobs", {"keys": ["notify-team"]}, ctx)
    cursor = doc.structure.triggers["cron"].cron_cursor_job_id
    assert cursor == job(doc, "fetch-referrals").id


@pytest.mark.parametrize(
    ("keys", "with_code"),
    [
        (["fetch-referrals", "check-coverage", "notify-team"], 2),
        (["check-coverage"], 1),
        (["notify-team"], 0),
    ],
)
def test_remove_reports_code_held(keys: list[str], with_code: int) -> None:
    ctx = make_context()
    doc = fixture_doc()
    result = ok(doc, "remove_jobs", {"keys": keys}, ctx)
    assert not set(keys) & set(doc.structure.jobs)
    if with_code:
        assert f"{with_code} of them held code" in result.text
    else:
        assert "held code" not in result.text


def test_remove_leaves_untouched_yaml_alone() -> None:
    ctx = make_context()
    doc = fixture_doc()
    before = doc.to_yaml()
    ok(doc, "remove_jobs", {"keys": ["notify-team"]}, ctx)
    after = doc.to_yaml()
    for section, key in [
        ("jobs", "fetch-referrals"),
        ("jobs", "check-coverage"),
        ("triggers", "webhook"),
        ("edges", "fetch-referrals->check-coverage"),
    ]:
        assert yaml_block(after, section, key) == yaml_block(before, section, key)
    assert "coverage-failed" not in after and "notify-team" not in after


def test_remove_duplicate_keys_in_one_call(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ok(doc, "remove_jobs", {"keys": ["notify-team", "notify-team"]}, ctx)
    assert "notify-team" not in doc.structure.jobs


def test_remove_unknown_key_in_batch_removes_nothing(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    result = fails(doc, "remove_jobs", {"keys": ["notify-team", "notfy-team"]}, ctx, "unknown_job")
    assert "Did you mean 'notify-team'?" in result.text
    assert "notify-team" in doc.structure.jobs


def test_remove_jobs_needs_keys(ctx: ToolContext, doc: WorkflowDocument) -> None:
    fails(doc, "remove_jobs", {"keys": []}, ctx, "invalid_arguments")


def test_remove_trigger_target_warns_trigger_unconnected(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    result = ok(doc, "remove_jobs", {"keys": ["fetch-referrals"]}, ctx)
    assert not doc.structure.edges_from("webhook")
    assert "Note: Trigger 'webhook' is not connected to a step yet." in result.text


CURSOR_BY_KEY = """\
jobs:
  a:
    id: j-a
    name: A
    adaptor: '@openfn/language-common@latest'
triggers:
  nightly:
    id: t-1
    type: cron
    cron_expression: 0 2 * * *
    cron_cursor_job_id: a
"""


def test_cursor_held_as_key_follows_rename_and_is_cleared_on_remove(ctx: ToolContext) -> None:
    doc = WorkflowDocument.from_yaml(CURSOR_BY_KEY)
    result = ok(doc, "update_jobs", {"jobs": [{"key": "a", "new_key": "first"}]}, ctx)
    assert doc.structure.triggers["nightly"].cron_cursor_job_id == "first"
    assert "cron cursor of nightly" in result.text
    ok(doc, "remove_jobs", {"keys": ["first"]}, ctx)
    assert doc.structure.triggers["nightly"].cron_cursor_job_id is None
    assert doc.to_yaml().endswith("    cron_expression: 0 2 * * *\n")
