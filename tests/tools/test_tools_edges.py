"""add_edges through run_tool: default conditions, graph rules, error codes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tools.helpers import (
    changes,
    edge,
    fails,
    fake_id,
    loose_jobs_doc,
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


# =========================================================================== add_edges


def test_default_condition_from_a_job(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = add(doc, ctx, source="extract", target="transform")
    added = edge(doc, "extract", "transform")
    assert added.key == "extract->transform"
    assert added.id == fake_id(5)
    assert (added.source_job, added.source_trigger) == ("extract", None)
    assert added.condition_type == "on_job_success"
    assert added.condition_expression is None and added.enabled is True
    assert changes(result) == [("added", "edge", "extract->transform")]
    assert result.structure is not None
    assert result.structure["edges"] == [
        {"source": "extract", "target": "transform", "condition_type": "on_job_success"}
    ]
    assert yaml_block(doc.to_yaml(), "edges", "extract->transform") == (
        "  extract->transform:\n"
        f"    id: {fake_id(5)}\n"
        "    source_job: extract\n"
        "    target_job: transform\n"
        "    condition_type: on_job_success\n"
        "    enabled: true\n"
    )


def test_default_condition_from_a_trigger(ctx: ToolContext, doc: WorkflowDocument) -> None:
    add(doc, ctx, source="webhook", target="extract")
    added = edge(doc, "webhook", "extract")
    assert added.key == "webhook->extract"
    assert (added.source_trigger, added.source_job) == ("webhook", None)
    assert added.condition_type == "always"
    assert "source_job" not in yaml_block(doc.to_yaml(), "edges", "webhook->extract")


@pytest.mark.parametrize("condition", ["always", "on_job_success", "on_job_failure"])
def test_explicit_condition(ctx: ToolContext, doc: WorkflowDocument, condition: str) -> None:
    add(doc, ctx, source="extract", target="load", condition_type=condition)
    assert edge(doc, "extract", "load").condition_type == condition


def test_label_and_enabled(ctx: ToolContext, doc: WorkflowDocument) -> None:
    add(doc, ctx, source="extract", target="load", condition_label="Bulk", enabled=False)
    added = edge(doc, "extract", "load")
    assert (added.condition_label, added.enabled) == ("Bulk", False)


def test_js_expression_requires_expression(ctx: ToolContext, doc: WorkflowDocument) -> None:
    fails(
        doc,
        "add_edges",
        {"edges": [{"source": "extract", "target": "load", "condition_type": "js_expression"}]},
        ctx,
        "missing_condition_expression",
    )


@pytest.mark.parametrize("condition_type", [None, "js_expression"])
def test_expression_implies_js_expression(
    ctx: ToolContext, doc: WorkflowDocument, condition_type: str | None
) -> None:
    spec: dict[str, Any] = {"source": "extract", "target": "load"}
    spec["condition_expression"] = "state.data.length > 0"
    if condition_type:
        spec["condition_type"] = condition_type
    add(doc, ctx, **spec)
    added = edge(doc, "extract", "load")
    assert added.condition_type == "js_expression"
    assert added.condition_expression == "state.data.length > 0"


@pytest.mark.parametrize("condition", ["always", "on_job_success", "on_job_failure"])
def test_expression_on_a_non_js_edge_is_an_error(
    ctx: ToolContext, doc: WorkflowDocument, condition: str
) -> None:
    spec = {"source": "extract", "target": "load", "condition_type": condition}
    spec["condition_expression"] = "true"
    fails(doc, "add_edges", {"edges": [spec]}, ctx, "unexpected_condition_expression")


def test_duplicate_edge(ctx: ToolContext, chain: WorkflowDocument) -> None:
    result = fails(
        chain,
        "add_edges",
        {"edges": [{"source": "extract", "target": "transform", "condition_type": "always"}]},
        ctx,
        "duplicate_edge",
    )
    assert "use update_edges" in result.text


def test_duplicate_edge_within_a_batch(ctx: ToolContext, doc: WorkflowDocument) -> None:
    spec = {"source": "extract", "target": "transform"}
    fails(doc, "add_edges", {"edges": [spec, spec]}, ctx, "duplicate_edge")


def test_edge_into_a_trigger(ctx: ToolContext, doc: WorkflowDocument) -> None:
    fails(
        doc,
        "add_edges",
        {"edges": [{"source": "extract", "target": "webhook"}]},
        ctx,
        "edge_into_trigger",
    )


def test_unknown_source_lists_steps_and_triggers(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc, "add_edges", {"edges": [{"source": "extrct", "target": "load"}]}, ctx, "unknown_node"
    )
    assert "Did you mean 'extract'?" in result.text
    assert "Steps: extract, transform, load; triggers: webhook." in result.text


def test_unknown_target_with_hint(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc, "add_edges", {"edges": [{"source": "extract", "target": "Load"}]}, ctx, "unknown_job"
    )
    assert "'Load' is the display name of step 'load'; use the key." in result.text
    result = fails(
        doc, "add_edges", {"edges": [{"source": "extract", "target": "lod"}]}, ctx, "unknown_job"
    )
    assert "Did you mean 'load'?" in result.text
    assert "Steps: extract, transform, load." in result.text


@pytest.mark.parametrize(
    "edges",
    [
        [{"source": "load", "target": "extract"}],
        [{"source": "transform", "target": "extract"}],
        [{"source": "load", "target": "load"}],
    ],
    ids=["long-loop", "two-step-loop", "self-loop"],
)
def test_cycle(ctx: ToolContext, chain: WorkflowDocument, edges: list[dict[str, str]]) -> None:
    result = fails(chain, "add_edges", {"edges": edges}, ctx, "cycle")
    assert "workflows run forward only" in result.text


def test_cycle_within_a_batch(ctx: ToolContext, doc: WorkflowDocument) -> None:
    edges = [{"source": "extract", "target": "load"}, {"source": "load", "target": "extract"}]
    fails(doc, "add_edges", {"edges": edges}, ctx, "cycle")


def test_second_edge_from_a_trigger(ctx: ToolContext, chain: WorkflowDocument) -> None:
    result = fails(
        chain,
        "add_edges",
        {"edges": [{"source": "webhook", "target": "load"}]},
        ctx,
        "trigger_multiple_edges",
    )
    assert "a trigger starts exactly one step" in result.text


@pytest.mark.parametrize("condition", ["on_job_success", "on_job_failure"])
def test_job_condition_from_a_trigger(
    ctx: ToolContext, doc: WorkflowDocument, condition: str
) -> None:
    fails(
        doc,
        "add_edges",
        {"edges": [{"source": "webhook", "target": "extract", "condition_type": condition}]},
        ctx,
        "invalid_trigger_condition",
    )


def test_one_bad_edge_adds_nothing(ctx: ToolContext, doc: WorkflowDocument) -> None:
    edges = [{"source": "extract", "target": "transform"}, {"source": "transform", "target": "x"}]
    fails(doc, "add_edges", {"edges": edges}, ctx, "unknown_job")
    assert doc.structure.edges == {}


@pytest.mark.parametrize(
    "args",
    [
        {"edges": []},
        {"edges": [{"source": "extract"}]},
        {"edges": [{"source": "extract", "target": "load", "id": "x"}]},
        {"edges": [{"source": "extract", "target": "load", "condition_type": "sometimes"}]},
    ],
)
def test_add_edges_bad_arguments(ctx: ToolContext, doc: WorkflowDocument, args: Any) -> None:
    fails(doc, "add_edges", args, ctx, "invalid_arguments")
