"""Read tools, the sub-agent tool, read-only sessions, unknown tools and tool definitions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.tools.helpers import (
    FIXTURE_FETCH_BODY,
    call,
    fails,
    fixture_doc,
    make_context,
    ok,
    pinned,
    referral_doc,
)
from tools.base import ToolContext
from tools.document import WorkflowDocument
from tools.jobcode.stitch import stitch_job_code
from tools.registry import MUTATING_TOOLS, TOOLS, tool_definitions

READ_TOOLS = {
    "inspect_job_code",
    "search_documentation",
    "preview_change",
    "test_run",
    "offer_plan_mode",
}
"""Tools a read-only session keeps: they look, or test-run, and change nothing."""


# =========================================================================== inspect_job_code


def test_inspect_job_code_returns_bodies() -> None:
    ctx = make_context()
    doc = fixture_doc()
    before = doc.to_yaml()
    result = ok(doc, "inspect_job_code", {"job_keys": ["fetch-referrals", "notify-team"]}, ctx)
    assert result.data == {
        "bodies": {"fetch-referrals": FIXTURE_FETCH_BODY, "notify-team": "// Add operations here"}
    }
    assert result.text.startswith(
        "--- fetch-referrals (Fetch referrals, @openfn/language-http@6.5.1) ---\n"
        "// Pull new referrals since the cursor\n"
    )
    assert "--- notify-team (Notify team, @openfn/language-gmail@latest) ---" in result.text
    assert result.changes == [] and result.structure is None
    assert doc.to_yaml() == before


def test_inspect_job_code_deduplicates(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = ok(doc, "inspect_job_code", {"job_keys": ["notify-team", "notify-team"]}, ctx)
    assert result.data is not None
    assert list(result.data["bodies"]) == ["notify-team"]
    assert result.text.count("--- notify-team") == 1


def test_inspect_unknown_job(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc, "inspect_job_code", {"job_keys": ["notify-team", "Notify team"]}, ctx, "unknown_job"
    )
    assert "use the key" in result.text
    assert "was not changed" not in result.text  # a read tool changes nothing anyway


@pytest.mark.parametrize("keys", [[], ["notify-team"] * 21])
def test_inspect_argument_limits(ctx: ToolContext, doc: WorkflowDocument, keys: Any) -> None:
    fails(doc, "inspect_job_code", {"job_keys": keys}, ctx, "invalid_arguments")


# =========================================================================== search_documentation


def test_search_documentation_returns_hits(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = ok(doc, "search_documentation", {"query": "post json to an http endpoint"}, ctx)
    assert result.data is not None
    hits = result.data["hits"]
    assert 1 <= len(hits) <= 5
    assert hits[0]["title"].startswith("http.post(")
    assert hits[0]["adaptor"] == "@openfn/language-http"
    assert "http.post(" in result.text


def test_search_documentation_limits_and_filters(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = ok(
        doc,
        "search_documentation",
        {"query": "create a record", "adaptor": "salesforce", "num_results": 2},
        ctx,
    )
    assert result.data is not None
    assert 1 <= len(result.data["hits"]) <= 2
    assert {h["adaptor"] for h in result.data["hits"]} == {"@openfn/language-salesforce"}


def test_search_documentation_without_match(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = ok(doc, "search_documentation", {"query": "zzqxvw plonkety"}, ctx)
    assert result.data == {"hits": []}
    assert "No documentation matched" in result.text


def test_search_documentation_unknown_adaptor(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc, "search_documentation", {"query": "post", "adaptor": "htttp"}, ctx, "unknown_adaptor"
    )
    assert "@openfn/language-http" in result.text


@pytest.mark.parametrize(
    "args", [{"query": ""}, {"query": "x", "num_results": 0}, {"query": "x", "num_results": 21}]
)
def test_search_documentation_bad_arguments(
    ctx: ToolContext, doc: WorkflowDocument, args: Any
) -> None:
    fails(doc, "search_documentation", args, ctx, "invalid_arguments")


# =========================================================================== call_job_code_agent


def test_call_job_code_agent(ctx: ToolContext, doc: WorkflowDocument) -> None:
    before = doc.to_yaml()
    message = "POST each referral to /coverage and keep the responses in state.coverage"
    result = ok(doc, "call_job_code_agent", {"job_key": "check-coverage", "message": message}, ctx)
    assert result.data == {"job_key": "check-coverage", "message": message}
    assert "check-coverage" in result.text
    assert doc.to_yaml() == before


def test_call_job_code_agent_unknown_key(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc,
        "call_job_code_agent",
        {"job_key": "check", "message": "write it"},
        ctx,
        "unknown_job",
    )
    assert "Did you mean 'check-coverage'?" in result.text


@pytest.mark.parametrize(
    "args", [{"job_key": "check-coverage"}, {"job_key": "check-coverage", "message": ""}]
)
def test_call_job_code_agent_bad_arguments(
    ctx: ToolContext, doc: WorkflowDocument, args: Any
) -> None:
    fails(doc, "call_job_code_agent", args, ctx, "invalid_arguments")


# =========================================================================== read-only sessions

# Valid calls on referral_doc: refused only because the session is read-only.
VALID_MUTATIONS: dict[str, dict[str, Any]] = {
    "create_workflow": {"name": "W", "jobs": [{"name": "A", "adaptor": "http"}]},
    "update_workflow": {"name": "Renamed"},
    "add_jobs": {"jobs": [{"name": "Archive", "adaptor": "common"}]},
    "update_jobs": {"jobs": [{"key": "notify-team", "name": "Tell team"}]},
    "attach_credential": {"credential": "payer-portal", "adaptor": "http"},
    "remove_jobs": {"keys": ["notify-team"]},
    "add_edges": {"edges": [{"source": "fetch-referrals", "target": "notify-team"}]},
    "update_edges": {
        "edges": [{"source": "fetch-referrals", "target": "check-coverage", "enabled": False}]
    },
    "remove_edges": {"edges": [{"source": "fetch-referrals", "target": "check-coverage"}]},
    "set_trigger": {"type": "webhook", "enabled": True},
    "call_job_code_agent": {"job_key": "notify-team", "message": "send an email"},
    "add_review_gate": {
        "part": "raise",
        "reviewer": "coordinator",
        "subject": "referral",
        "resume_path": "intake-review",
        "after": "notify-team",
    },
    "add_status_transition": {
        "after": "check-coverage",
        "status": "active",
        "otherwise": "on-hold",
        "checks": [{"name": "coverage is verified"}],
    },
    "add_rule_table": {
        "name": "Check documents",
        "after": "check-coverage",
        "rows": [{"when": "orthopedic", "requires": ["imaging"]}],
    },
}


def test_every_mutating_tool_has_a_read_only_case() -> None:
    assert set(VALID_MUTATIONS) == set(MUTATING_TOOLS)
    assert set(TOOLS) - set(MUTATING_TOOLS) == READ_TOOLS


@pytest.mark.parametrize("tool", sorted(VALID_MUTATIONS))
def test_read_only_refuses_mutations(ctx: ToolContext, doc: WorkflowDocument, tool: str) -> None:
    result = fails(doc, tool, VALID_MUTATIONS[tool], ctx, "read_only", read_only=True)
    assert "read-only" in result.text


# What each of those calls does to referral_doc when the session may write.
EFFECTS: dict[str, Callable[[WorkflowDocument], bool]] = {
    "update_workflow": lambda d: d.name == "Renamed",
    "add_jobs": lambda d: d.structure.jobs["archive"].adaptor == pinned("common"),
    "update_jobs": lambda d: d.structure.jobs["notify-team"].name == "Tell team",
    "attach_credential": lambda d: d.structure.jobs["fetch-referrals"].credential == "payer-portal",
    "remove_jobs": lambda d: "notify-team" not in d.structure.jobs,
    "add_edges": lambda d: d.structure.find_edge("fetch-referrals", "notify-team") is not None,
    "update_edges": lambda d: d.structure.edges["fetch-referrals->check-coverage"].enabled is False,
    "remove_edges": lambda d: "fetch-referrals->check-coverage" not in d.structure.edges,
    "set_trigger": lambda d: d.structure.triggers["webhook"].enabled is True,
    "call_job_code_agent": lambda d: d.structure == referral_doc(make_context()).structure,
    "add_review_gate": lambda d: "send-referral-to-coordinator-for-review" in d.structure.jobs,
    "add_status_transition": lambda d: "set-record-status-to-active" in d.structure.jobs,
    "add_rule_table": lambda d: "RULES" in (d.structure.jobs["check-documents"].body or ""),
}


@pytest.mark.parametrize("tool", sorted(EFFECTS))
def test_same_calls_succeed_outside_read_only(tool: str) -> None:
    ctx = make_context()
    doc = referral_doc(ctx)
    ok(doc, tool, VALID_MUTATIONS[tool], ctx)
    assert EFFECTS[tool](doc)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("inspect_job_code", {"job_keys": ["notify-team"]}),
        ("search_documentation", {"query": "send email"}),
        ("preview_change", {"tool": "remove_jobs", "input": {"keys": ["check-coverage"]}}),
    ],
)
def test_read_only_allows_read_tools(
    ctx: ToolContext, doc: WorkflowDocument, tool: str, args: Any
) -> None:
    before = doc.to_yaml()
    result = call(doc, tool, args, ctx, read_only=True)
    assert result.ok is True, result.text
    assert result.data
    assert doc.to_yaml() == before


def test_unknown_tool(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(doc, "delete_everything", {}, ctx, "unknown_tool")
    assert "add_jobs" in result.text and "search_documentation" in result.text
    assert "was not changed" not in result.text


# =========================================================================== tool definitions


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


def test_read_only_definitions_have_only_read_tools() -> None:
    # Plan mode is not for read-only sessions either: no offer of it.
    assert {d["name"] for d in tool_definitions(read_only=True)} == READ_TOOLS - {"offer_plan_mode"}
    assert [d["name"] for d in tool_definitions()] == list(TOOLS)


@pytest.mark.parametrize("definition", tool_definitions(), ids=lambda d: d["name"])
def test_definition_shape(definition: dict[str, Any]) -> None:
    assert set(definition) == {"name", "description", "input_schema"}
    assert definition["description"].strip()
    schema = definition["input_schema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert "$defs" not in schema
    for node in _walk(schema):
        assert "$ref" not in node
        assert "title" not in node
        properties = node.get("properties")
        # A job's id and code are the server's: no tool takes them. (A test run's sample
        # HTTP response has a body of its own: it is not a step's code.)
        if isinstance(properties, dict) and "url" not in properties:
            assert "id" not in properties
            assert "body" not in properties


# =========================================================================== unstorable text


@pytest.mark.parametrize("bad", ["\x00", "\ud800"])
def test_a_nul_or_an_unpaired_surrogate_in_written_text_changes_nothing(bad: str) -> None:
    """The document would emit it escaped, commit it, and never load again (a
    surrogate got that far in job code; other checks happened to catch the rest)."""
    ctx = make_context()
    doc = fixture_doc()
    before = doc.to_yaml()
    expression = {"source": "fetch-referrals", "target": "notify-team"}
    expression["condition_expression"] = f"true{bad}"
    edged = call(doc, "add_edges", {"edges": [expression]}, ctx)
    stitched = stitch_job_code(doc, "fetch-referrals", f"fn(state => state); // {bad}")
    assert not edged.ok and not stitched.ok
    assert bad not in edged.text + stitched.text
    assert doc.to_yaml() == before
    assert WorkflowDocument.from_yaml(before).to_yaml() == before


# =========================================================================== offer_plan_mode


def test_offer_plan_mode_names_the_processes_and_changes_nothing(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    before = doc.to_yaml()
    args = {"processes": ["Intake", "Coverage  check", "Status report"]}
    result = call(doc, "offer_plan_mode", args, ctx, read_only=True)
    assert result.ok, result.text
    assert result.data == {
        "offer": "plan",
        "processes": ["Intake", "Coverage check", "Status report"],
    }
    assert '3 separate processes: "Intake", "Coverage check" and "Status report"' in result.text
    assert "nothing was changed" in result.text
    assert doc.to_yaml() == before
    assert TOOLS["offer_plan_mode"].offers == "plan"


@pytest.mark.parametrize("processes", [[], ["Intake"], ["Intake", ""]])
def test_offer_plan_mode_needs_two_named_processes(
    ctx: ToolContext, doc: WorkflowDocument, processes: list[str]
) -> None:
    fails(doc, "offer_plan_mode", {"processes": processes}, ctx, "invalid_arguments")
