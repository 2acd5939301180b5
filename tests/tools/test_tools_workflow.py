"""create_workflow, update_workflow and set_trigger through run_tool."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tools.helpers import (
    FIXTURE_EDGE_IDS,
    FIXTURE_TRIGGER_ID,
    changes,
    edge,
    edge_ids,
    edge_pairs,
    fails,
    fake_id,
    fixture_doc,
    job,
    loose_jobs_doc,
    make_context,
    ok,
    trigger,
    yaml_block,
)
from tools.base import ToolContext
from tools.document import WorkflowDocument

JOBS = [
    {"name": "Fetch referrals", "adaptor": "http"},
    {"name": "Check coverage", "adaptor": "fhir@5.0.15"},
    {"name": "Notify team", "adaptor": "gmail"},
]
CHAIN = [
    {"source": "fetch-referrals", "target": "check-coverage"},
    {"source": "check-coverage", "target": "notify-team", "condition_expression": "!state.ok"},
]


# =========================================================================== create_workflow


def test_create_full_workflow_connects_trigger_to_single_root(ctx: ToolContext) -> None:
    doc = WorkflowDocument.new()
    args = {"name": "Référral intake", "jobs": JOBS, "edges": CHAIN, "trigger": {"type": "webhook"}}
    result = ok(doc, "create_workflow", args, ctx)
    s = doc.structure
    assert s.name == "Referral intake"
    assert list(s.jobs) == ["fetch-referrals", "check-coverage", "notify-team"]
    assert [j.id for j in s.jobs.values()] == [fake_id(1), fake_id(2), fake_id(3)]
    assert job(doc, "check-coverage").adaptor == "@openfn/language-fhir@5.0.15"
    assert trigger(doc, "webhook").id == fake_id(4)
    assert trigger(doc, "webhook").enabled is False
    assert edge_ids(doc) == {
        "fetch-referrals->check-coverage": fake_id(5),
        "check-coverage->notify-team": fake_id(6),
        "webhook->fetch-referrals": fake_id(7),
    }
    assert edge(doc, "check-coverage", "notify-team").condition_type == "js_expression"
    assert edge(doc, "webhook", "fetch-referrals").condition_type == "always"
    assert ("added", "edge", "webhook->fetch-referrals") in changes(result)
    assert "connected to fetch-referrals" in result.text
    assert result.structure is not None
    assert result.structure["triggers"] == [{"key": "webhook", "type": "webhook", "enabled": False}]


def test_create_with_explicit_trigger_edge(ctx: ToolContext) -> None:
    doc = WorkflowDocument.new()
    edges = [{"source": "cron", "target": "check-coverage"}]
    trigger_spec = {"type": "cron", "cron_expression": "0 9 1 * *", "enabled": True}
    ok(
        doc,
        "create_workflow",
        {"name": "W", "jobs": JOBS, "edges": edges, "trigger": trigger_spec},
        ctx,
    )
    assert edge_pairs(doc) == {("cron", "check-coverage")}
    assert trigger(doc, "cron").cron_expression == "0 9 1 * *"
    assert trigger(doc, "cron").enabled is True


def test_create_with_several_roots_leaves_trigger_unconnected(ctx: ToolContext) -> None:
    doc = WorkflowDocument.new()
    result = ok(
        doc, "create_workflow", {"name": "W", "jobs": JOBS, "trigger": {"type": "webhook"}}, ctx
    )
    assert doc.structure.edges == {}
    assert "not connected yet" in result.text
    assert "Trigger 'webhook' is not connected to a step yet." in result.text


def test_create_without_trigger(ctx: ToolContext) -> None:
    doc = WorkflowDocument.new()
    ok(doc, "create_workflow", {"name": "W", "jobs": JOBS[:1]}, ctx)
    assert doc.structure.triggers == {}
    assert list(doc.structure.jobs) == ["fetch-referrals"]


def test_create_on_a_named_empty_document(ctx: ToolContext) -> None:
    doc = WorkflowDocument.from_yaml("name: Old\nowner: team-a\n")
    ok(doc, "create_workflow", {"name": "New", "jobs": JOBS[:1]}, ctx)
    text = doc.to_yaml()
    assert text.startswith("name: New\njobs:\n  fetch-referrals:\n")
    assert text.endswith("owner: team-a\n")


def test_create_on_non_empty_workflow(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc, "create_workflow", {"name": "Again", "jobs": JOBS}, ctx, "workflow_not_empty"
    )
    assert "add_jobs" in result.text


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"name": "!!!", "jobs": JOBS}, "invalid_name"),
        ({"name": "W", "jobs": [*JOBS, {"name": "X", "adaptor": "nope"}]}, "unknown_adaptor"),
        ({"name": "W", "jobs": JOBS, "edges": [*CHAIN, CHAIN[0]]}, "duplicate_edge"),
        ({"name": "W", "jobs": JOBS, "trigger": {"type": "cron"}}, "missing_cron_expression"),
        (
            {"name": "W", "jobs": JOBS, "trigger": {"type": "cron", "cron_expression": "bad"}},
            "invalid_cron",
        ),
        ({"name": "W", "jobs": [{"name": "X", "adaptor": "http", "id": "1"}]}, "invalid_arguments"),
    ],
)
def test_create_errors_write_nothing(ctx: ToolContext, args: dict[str, Any], code: str) -> None:
    doc = WorkflowDocument.new()
    fails(doc, "create_workflow", args, ctx, code)
    assert doc.to_yaml() == "{}\n"


# =========================================================================== update_workflow


def test_update_workflow_renames(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = ok(doc, "update_workflow", {"name": "Référrals v2"}, ctx)
    assert doc.name == "Referrals v2"
    assert doc.to_yaml().startswith("name: Referrals v2\n")
    assert changes(result) == [("updated", "workflow", "name")]


def test_update_workflow_keeps_everything_else() -> None:
    ctx = make_context()
    doc = fixture_doc()
    before = doc.to_yaml()
    ok(doc, "update_workflow", {"name": "Referral intake v2"}, ctx)
    after = doc.to_yaml()
    assert after == before.replace('name: "Referral intake"', 'name: "Referral intake v2"')


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("Referral intake", "no_change"),
        (" Referral  intake ", "no_change"),
        ("", "invalid_name"),
        ("x" * 101, "name_too_long"),
    ],
)
def test_update_workflow_errors(
    ctx: ToolContext, doc: WorkflowDocument, name: str, code: str
) -> None:
    fails(doc, "update_workflow", {"name": name}, ctx, code)


# =========================================================================== set_trigger


def test_create_webhook_defaults_disabled_and_connects(ctx: ToolContext) -> None:
    doc = loose_jobs_doc(ctx, trigger=False)
    ok(doc, "remove_jobs", {"keys": ["transform", "load"]}, ctx)
    result = ok(doc, "set_trigger", {"type": "webhook"}, ctx)
    hook = trigger(doc, "webhook")
    assert (hook.id, hook.type, hook.enabled) == (fake_id(4), "webhook", False)
    assert edge(doc, "webhook", "extract").id == fake_id(5)
    assert changes(result) == [
        ("added", "trigger", "webhook"),
        ("added", "edge", "webhook->extract"),
    ]
    assert yaml_block(doc.to_yaml(), "triggers", "webhook") == (
        f"  webhook:\n    id: {fake_id(4)}\n    type: webhook\n    enabled: false\n"
    )


def test_create_trigger_enabled_with_custom_key(ctx: ToolContext) -> None:
    doc = loose_jobs_doc(ctx, trigger=False)
    ok(doc, "set_trigger", {"type": "webhook", "key": "intake", "enabled": True}, ctx)
    assert trigger(doc, "intake").enabled is True


@pytest.mark.parametrize(
    ("key", "code"), [("extract", "node_key_clash"), ("bad key", "invalid_key")]
)
def test_create_trigger_key_errors(key: str, code: str) -> None:
    ctx = make_context()
    doc = loose_jobs_doc(ctx, trigger=False)
    fails(doc, "set_trigger", {"type": "webhook", "key": key}, ctx, code)


@pytest.mark.parametrize(
    "expression",
    ["*/15 * * * *", "30 7 * * 1-5", "0 9 1 * *", "0 0 * * MON-FRI", "0 12 1,15 JAN-JUN *"],
)
def test_valid_cron(ctx: ToolContext, doc: WorkflowDocument, expression: str) -> None:
    ok(doc, "set_trigger", {"type": "cron", "cron_expression": expression}, ctx)
    assert trigger(doc, "cron").cron_expression == expression


def test_cron_expression_whitespace_is_normalised(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ok(doc, "set_trigger", {"type": "cron", "cron_expression": " 30  7 *\t* 1-5 "}, ctx)
    assert trigger(doc, "cron").cron_expression == "30 7 * * 1-5"


@pytest.mark.parametrize(
    "expression",
    [
        "* * * *",
        "0 0 * * * *",
        "60 * * * *",
        "0 24 * * *",
        "0 0 0 * *",
        "0 0 * 13 *",
        "0 0 * * 8",
        "*/0 * * * *",
        "5-1 * * * *",
        "0 0 * * MON-XYZ",
        "every day",
    ],
)
def test_invalid_cron(ctx: ToolContext, doc: WorkflowDocument, expression: str) -> None:
    result = fails(
        doc, "set_trigger", {"type": "cron", "cron_expression": expression}, ctx, "invalid_cron"
    )
    assert "Invalid cron" in result.text


def test_cron_without_expression(ctx: ToolContext, doc: WorkflowDocument) -> None:
    fails(doc, "set_trigger", {"type": "cron"}, ctx, "missing_cron_expression")


def test_replace_webhook_keeps_webhook_settings() -> None:
    ctx = make_context()
    doc = fixture_doc()
    ok(doc, "set_trigger", {"type": "webhook", "enabled": True}, ctx)
    hook = trigger(doc, "webhook")
    assert (hook.enabled, hook.webhook_reply, hook.custom_path) == (
        True,
        "after_completion",
        "referrals/intake",
    )
    ok(doc, "set_trigger", {"type": "webhook", "custom_path": "v2/intake"}, ctx)
    hook = trigger(doc, "webhook")
    assert (hook.webhook_reply, hook.custom_path, hook.id) == (
        "after_completion",
        "v2/intake",
        FIXTURE_TRIGGER_ID,
    )
    assert "    has_auth_method: true\n" in yaml_block(doc.to_yaml(), "triggers", "webhook")


def test_replace_webhook_response_config(ctx: ToolContext, doc: WorkflowDocument) -> None:
    config = {"status": 202, "body": {"ok": True}}
    ok(doc, "set_trigger", {"type": "webhook", "webhook_response_config": config}, ctx)
    ok(doc, "set_trigger", {"type": "webhook", "webhook_reply": "before_start"}, ctx)
    hook = trigger(doc, "webhook")
    assert (hook.webhook_response_config, hook.webhook_reply) == (config, "before_start")


def test_switch_webhook_to_cron_rekeys_and_drops_webhook_fields() -> None:
    ctx = make_context()
    doc = fixture_doc()
    result = ok(doc, "set_trigger", {"type": "cron", "cron_expression": "0 7 * * 1-5"}, ctx)
    assert list(doc.structure.triggers) == ["cron"]
    cron = trigger(doc, "cron")
    assert (cron.id, cron.type, cron.cron_expression) == (FIXTURE_TRIGGER_ID, "cron", "0 7 * * 1-5")
    assert (cron.webhook_reply, cron.custom_path) == (None, None)
    moved = edge(doc, "cron", "fetch-referrals")
    assert (moved.key, moved.id, moved.source_trigger) == (
        "cron->fetch-referrals",
        FIXTURE_EDGE_IDS["webhook->fetch-referrals"],
        "cron",
    )
    assert "dropped webhook_reply, custom_path" in result.text
    assert "renamed from webhook" in result.text
    block = yaml_block(doc.to_yaml(), "triggers", "cron")
    assert "webhook_reply" not in block and "custom_path" not in block
    assert "    type: cron                          # webhook | cron\n" in block
    assert "    has_auth_method: true\n" in block


def test_switch_cron_to_webhook_drops_cron_fields(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ok(
        doc,
        "set_trigger",
        {"type": "cron", "cron_expression": "0 * * * *", "cron_cursor_job": "notify-team"},
        ctx,
    )
    result = ok(doc, "set_trigger", {"type": "webhook"}, ctx)
    hook = trigger(doc, "webhook")
    assert (hook.cron_expression, hook.cron_cursor_job_id, hook.id) == (None, None, fake_id(4))
    assert "dropped cron_expression, cron_cursor_job_id" in result.text
    assert edge(doc, "webhook", "fetch-referrals").id == fake_id(7)


def test_custom_trigger_key_is_kept_on_type_switch(ctx: ToolContext) -> None:
    doc = loose_jobs_doc(ctx, trigger=False)
    ok(doc, "set_trigger", {"type": "webhook", "key": "intake"}, ctx)
    ok(doc, "set_trigger", {"type": "cron", "cron_expression": "0 * * * *"}, ctx)
    assert list(doc.structure.triggers) == ["intake"]
    assert trigger(doc, "intake").type == "cron"


def test_new_key_renames_the_only_trigger(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = ok(doc, "set_trigger", {"type": "webhook", "key": "intake"}, ctx)
    assert list(doc.structure.triggers) == ["intake"]
    assert trigger(doc, "intake").id == fake_id(4)
    moved = edge(doc, "intake", "fetch-referrals")
    assert (moved.key, moved.id) == ("intake->fetch-referrals", fake_id(7))
    assert "renamed from webhook" in result.text


def test_cron_cursor_job_stored_as_job_id(ctx: ToolContext, doc: WorkflowDocument) -> None:
    args = {"type": "cron", "cron_expression": "0 * * * *", "cron_cursor_job": "check-coverage"}
    result = ok(doc, "set_trigger", args, ctx)
    assert trigger(doc, "cron").cron_cursor_job_id == fake_id(2)
    assert f"    cron_cursor_job_id: {fake_id(2)}\n" in doc.to_yaml()
    assert result.structure is not None
    assert result.structure["triggers"][0]["cron_cursor_job"] == "check-coverage"


def test_cron_cursor_job_without_id_is_stored_by_key(ctx: ToolContext) -> None:
    doc = WorkflowDocument.from_yaml(
        "jobs:\n  a:\n    id:\n    name: A\n    adaptor: '@openfn/language-http@latest'\n"
    )
    ok(
        doc,
        "set_trigger",
        {"type": "cron", "cron_expression": "0 * * * *", "cron_cursor_job": "a"},
        ctx,
    )
    assert trigger(doc, "cron").cron_cursor_job_id == "a"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (
            {"type": "cron", "cron_expression": "0 * * * *", "cron_cursor_job": "nope"},
            "unknown_job",
        ),
        ({"type": "webhook", "cron_cursor_job": "notify-team"}, "invalid_trigger_field"),
        ({"type": "webhook", "cron_expression": "0 * * * *"}, "invalid_trigger_field"),
        (
            {"type": "cron", "cron_expression": "0 * * * *", "custom_path": "x"},
            "invalid_trigger_field",
        ),
        ({"type": "webhook"}, "no_change"),
        ({"type": "webhook", "enabled": False}, "no_change"),
        ({"type": "webhook", "key": "webhook"}, "no_change"),
        ({"type": "webhook", "id": "x"}, "invalid_arguments"),
        ({"type": "email"}, "invalid_arguments"),
    ],
)
def test_set_trigger_errors(ctx: ToolContext, doc: WorkflowDocument, args: Any, code: str) -> None:
    fails(doc, "set_trigger", args, ctx, code)


def test_enable_and_disable(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = ok(doc, "set_trigger", {"type": "webhook", "enabled": True}, ctx)
    assert trigger(doc, "webhook").enabled is True
    assert "    enabled: true\n" in yaml_block(doc.to_yaml(), "triggers", "webhook")
    assert changes(result) == [("updated", "trigger", "webhook")]
    fails(doc, "set_trigger", {"type": "webhook", "enabled": True}, ctx, "no_change")
    ok(doc, "set_trigger", {"type": "webhook", "enabled": False}, ctx)
    assert trigger(doc, "webhook").enabled is False


SEVERAL_TRIGGERS = """\
jobs:
  a:
    id: j-a
    name: A
    adaptor: '@openfn/language-common@latest'
triggers:
  hook:
    id: t-1
    type: webhook
    enabled: false
  nightly:
    id: t-2
    type: cron
    enabled: true
    cron_expression: 0 2 * * *
"""


def test_several_triggers_need_a_key(ctx: ToolContext) -> None:
    doc = WorkflowDocument.from_yaml(SEVERAL_TRIGGERS)
    result = fails(
        doc, "set_trigger", {"type": "webhook", "enabled": True}, ctx, "ambiguous_trigger"
    )
    assert "hook, nightly" in result.text
    fails(doc, "set_trigger", {"type": "webhook", "key": "other"}, ctx, "ambiguous_trigger")
    ok(doc, "set_trigger", {"type": "cron", "key": "nightly", "cron_expression": "0 3 * * *"}, ctx)
    assert trigger(doc, "nightly").cron_expression == "0 3 * * *"
    assert trigger(doc, "hook").enabled is False
