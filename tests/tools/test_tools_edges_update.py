"""update_edges and remove_edges through run_tool: rekeys, kept ids, error codes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tools.helpers import (
    FIXTURE_EDGE_IDS,
    changes,
    edge,
    edge_ids,
    edge_pairs,
    fails,
    fixture_doc,
    loose_jobs_doc,
    make_context,
    ok,
    yaml_block,
)
from tools.base import ToolContext
from tools.document import WorkflowDocument


@pytest.fixture
def doc(ctx: ToolContext) -> WorkflowDocument:
    """extract, transform, load (ids 1-3) and an unconnected webhook (id 4)."""
    return loose_jobs_doc(ctx)


def add(doc: WorkflowDocument, ctx: ToolContext, **spec: Any) -> Any:
    return ok(doc, "add_edges", {"edges": [spec]}, ctx)


def update(doc: WorkflowDocument, ctx: ToolContext, **item: Any) -> Any:
    return ok(doc, "update_edges", {"edges": [item]}, ctx)


# =========================================================================== update_edges


@pytest.mark.parametrize("condition", ["always", "on_job_failure"])
def test_update_condition(ctx: ToolContext, chain: WorkflowDocument, condition: str) -> None:
    before = edge(chain, "extract", "transform")
    result = update(chain, ctx, source="extract", target="transform", condition_type=condition)
    after = edge(chain, "extract", "transform")
    assert after.condition_type == condition
    assert (after.key, after.id) == (before.key, before.id)
    assert changes(result) == [("updated", "edge", "extract->transform")]


def test_update_to_js_expression_and_back(ctx: ToolContext, chain: WorkflowDocument) -> None:
    update(chain, ctx, source="extract", target="transform", condition_expression="state.ok")
    assert edge(chain, "extract", "transform").condition_type == "js_expression"
    assert "condition_expression: state.ok" in chain.to_yaml()
    update(chain, ctx, source="extract", target="transform", condition_expression="!state.ok")
    assert edge(chain, "extract", "transform").condition_expression == "!state.ok"
    update(chain, ctx, source="extract", target="transform", condition_type="on_job_success")
    after = edge(chain, "extract", "transform")
    assert (after.condition_type, after.condition_expression) == ("on_job_success", None)
    assert "condition_expression" not in chain.to_yaml()


def test_update_to_js_expression_without_expression(
    ctx: ToolContext, chain: WorkflowDocument
) -> None:
    item = {"source": "extract", "target": "transform", "condition_type": "js_expression"}
    fails(chain, "update_edges", {"edges": [item]}, ctx, "missing_condition_expression")


def test_leaving_js_expression_drops_expression_from_fixture() -> None:
    ctx = make_context()
    doc = fixture_doc()
    update(doc, ctx, source="fetch-referrals", target="check-coverage", condition_type="always")
    block = yaml_block(doc.to_yaml(), "edges", "fetch-referrals->check-coverage")
    assert "condition_expression" not in block
    assert '    condition_label: "Has referrals"\n' in block
    assert "    ui_hint: curved                     # unknown edge field\n" in block


def test_retarget(ctx: ToolContext, doc: WorkflowDocument) -> None:
    add(doc, ctx, source="extract", target="transform", condition_label="raw")
    old = edge(doc, "extract", "transform")
    result = update(doc, ctx, source="extract", target="transform", new_target="load")
    moved = edge(doc, "extract", "load")
    assert moved.key == "extract->load"
    assert (moved.id, moved.condition_label, moved.condition_type) == (
        old.id,
        "raw",
        "on_job_success",
    )
    assert "extract->transform" not in doc.structure.edges
    assert changes(result) == [("updated", "edge", "extract->load")]


def test_new_source_job(ctx: ToolContext, chain: WorkflowDocument) -> None:
    old_id = edge(chain, "transform", "load").id
    update(chain, ctx, source="transform", target="load", new_source="extract")
    moved = edge(chain, "extract", "load")
    assert (moved.key, moved.id, moved.source_job) == ("extract->load", old_id, "extract")


def test_new_source_trigger(ctx: ToolContext, doc: WorkflowDocument) -> None:
    add(doc, ctx, source="extract", target="transform")
    old_id = edge(doc, "extract", "transform").id
    update(
        doc,
        ctx,
        source="extract",
        target="transform",
        new_source="webhook",
        condition_type="always",
    )
    moved = edge(doc, "webhook", "transform")
    assert (moved.key, moved.id) == ("webhook->transform", old_id)
    assert (moved.source_trigger, moved.source_job) == ("webhook", None)
    assert "source_job" not in yaml_block(doc.to_yaml(), "edges", "webhook->transform")


def test_retarget_keeps_unconventional_key() -> None:
    ctx = make_context()
    doc = fixture_doc()
    ok(
        doc,
        "update_edges",
        {
            "edges": [
                {
                    "source": "check-coverage",
                    "target": "notify-team",
                    "new_source": "fetch-referrals",
                }
            ]
        },
        ctx,
    )
    moved = edge(doc, "fetch-referrals", "notify-team")
    assert (moved.key, moved.id) == ("coverage-failed", FIXTURE_EDGE_IDS["coverage-failed"])


def test_label_set_and_clear(ctx: ToolContext, chain: WorkflowDocument) -> None:
    update(chain, ctx, source="extract", target="transform", condition_label="Has rows")
    assert edge(chain, "extract", "transform").condition_label == "Has rows"
    assert "condition_label: Has rows" in chain.to_yaml()
    update(chain, ctx, source="extract", target="transform", condition_label="")
    assert edge(chain, "extract", "transform").condition_label is None
    assert "condition_label" not in chain.to_yaml()


def test_enable_disable(ctx: ToolContext, chain: WorkflowDocument) -> None:
    update(chain, ctx, source="extract", target="transform", enabled=False)
    assert edge(chain, "extract", "transform").enabled is False
    update(chain, ctx, source="extract", target="transform", enabled=True)
    assert edge(chain, "extract", "transform").enabled is True


def test_unknown_edge(ctx: ToolContext, chain: WorkflowDocument) -> None:
    result = fails(
        chain,
        "update_edges",
        {"edges": [{"source": "extract", "target": "load", "enabled": False}]},
        ctx,
        "unknown_edge",
    )
    assert "webhook -> extract, extract -> transform, transform -> load" in result.text


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"condition_type": "on_job_success"},
        {"enabled": True},
        {"condition_label": ""},
        {"new_target": "transform"},
        {"new_source": "extract"},
    ],
)
def test_update_no_change(ctx: ToolContext, chain: WorkflowDocument, fields: Any) -> None:
    item = {"source": "extract", "target": "transform", **fields}
    fails(chain, "update_edges", {"edges": [item]}, ctx, "no_change")


def test_retarget_onto_existing_pair(ctx: ToolContext, chain: WorkflowDocument) -> None:
    add(chain, ctx, source="extract", target="load")
    fails(
        chain,
        "update_edges",
        {"edges": [{"source": "extract", "target": "load", "new_target": "transform"}]},
        ctx,
        "duplicate_edge",
    )
    fails(
        chain,
        "update_edges",
        {"edges": [{"source": "extract", "target": "load", "new_source": "transform"}]},
        ctx,
        "duplicate_edge",
    )


@pytest.mark.parametrize(
    ("item", "code"),
    [
        ({"new_target": "webhook"}, "edge_into_trigger"),
        ({"new_target": "nowhere"}, "unknown_job"),
        ({"new_source": "nowhere"}, "unknown_node"),
        ({"new_source": "load"}, "cycle"),
        ({"new_source": "webhook"}, "trigger_multiple_edges"),
    ],
)
def test_update_edge_errors(
    ctx: ToolContext, chain: WorkflowDocument, item: dict[str, str], code: str
) -> None:
    fails(
        chain,
        "update_edges",
        {"edges": [{"source": "extract", "target": "transform", **item}]},
        ctx,
        code,
    )


def test_update_batch_all_or_nothing(ctx: ToolContext, chain: WorkflowDocument) -> None:
    items = [
        {"source": "extract", "target": "transform", "enabled": False},
        {"source": "load", "target": "extract", "enabled": False},
    ]
    fails(chain, "update_edges", {"edges": items}, ctx, "unknown_edge")
    assert edge(chain, "extract", "transform").enabled is True


# =========================================================================== remove_edges


def test_remove_edges(ctx: ToolContext, chain: WorkflowDocument) -> None:
    before = edge_ids(chain)
    result = ok(
        chain,
        "remove_edges",
        {"edges": [{"source": "extract", "target": "transform"}]},
        ctx,
    )
    del before["extract->transform"]
    assert edge_ids(chain) == before
    assert changes(result) == [("removed", "edge", "extract->transform")]
    assert "extract->transform" not in chain.to_yaml()


def test_remove_trigger_edge_leaves_a_note(ctx: ToolContext, chain: WorkflowDocument) -> None:
    result = ok(chain, "remove_edges", {"edges": [{"source": "webhook", "target": "extract"}]}, ctx)
    assert "webhook->extract" not in chain.structure.edges
    assert "Trigger 'webhook' is not connected to a step yet." in result.text


def test_remove_unconventionally_keyed_edge() -> None:
    ctx = make_context()
    doc = fixture_doc()
    ok(doc, "remove_edges", {"edges": [{"source": "check-coverage", "target": "notify-team"}]}, ctx)
    assert set(doc.structure.edges) == {
        "webhook->fetch-referrals",
        "fetch-referrals->check-coverage",
    }
    assert "coverage-failed" not in doc.to_yaml()


def test_remove_several_edges(ctx: ToolContext, chain: WorkflowDocument) -> None:
    refs = [{"source": "extract", "target": "transform"}, {"source": "transform", "target": "load"}]
    ok(chain, "remove_edges", {"edges": refs}, ctx)
    assert edge_pairs(chain) == {("webhook", "extract")}


@pytest.mark.parametrize(
    "refs",
    [
        [{"source": "extract", "target": "load"}],
        [{"source": "extract", "target": "transform"}, {"source": "load", "target": "transform"}],
        [
            {"source": "extract", "target": "transform"},
            {"source": "extract", "target": "transform"},
        ],
    ],
)
def test_remove_unknown_edge(ctx: ToolContext, chain: WorkflowDocument, refs: Any) -> None:
    result = fails(chain, "remove_edges", {"edges": refs}, ctx, "unknown_edge")
    assert "Edges: " in result.text
    assert len(chain.structure.edges) == 3
