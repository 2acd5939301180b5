"""``preview_change`` and ``simulate``: an edit tried on a copy; the real document never moves.

Also the policy: only tools whose spec says ``impact`` can have any.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.tools.helpers import call, fails, fake_id, make_context, ok, referral_doc
from tools.base import ToolContext
from tools.document import WorkflowDocument
from tools.document.impact import impact
from tools.edits.preview_change import NO_IMPACT, simulate
from tools.registry import TOOLS


@pytest.fixture
def ctx() -> ToolContext:
    return make_context()


@pytest.fixture
def doc(ctx: ToolContext) -> WorkflowDocument:
    # webhook -> fetch-referrals -> check-coverage -(fails)-> notify-team
    return referral_doc(ctx)


def preview(doc: WorkflowDocument, ctx: ToolContext, tool: str, args: Any, **kw: Any) -> Any:
    return call(doc, "preview_change", {"tool": tool, "input": args}, ctx, **kw)


@pytest.mark.parametrize("read_only", [False, True])
def test_what_happens_if_i_remove_a_step(
    ctx: ToolContext, doc: WorkflowDocument, read_only: bool
) -> None:
    before = doc.to_yaml()
    structure = doc.structure
    result = preview(doc, ctx, "remove_jobs", {"keys": ["check-coverage"]}, read_only=read_only)
    assert result.ok, result.text
    assert result.text.startswith("Nothing was changed; this is what the change would do. ")
    assert (
        "The step 'Check coverage' would be removed. 'Notify team' would no longer run "
        "(no trigger would reach it)." in result.text
    )
    assert "The remove_jobs call would report: Removed Check coverage (check-coverage)." in (
        result.text
    )
    assert result.data is not None
    assert result.data["impact"] == [
        "The step 'Check coverage' would be removed.",
        "'Notify team' would no longer run (no trigger would reach it).",
    ]
    assert ("removed", "job", "check-coverage") in {
        (c["action"], c["kind"], c["key"]) for c in result.data["changes"]
    }
    # The real document: byte-identical, the same structure object, nothing mutated.
    assert doc.to_yaml() == before
    assert doc.structure is structure
    assert result.changes == [] and not result.mutated


def test_a_change_without_impact_says_so(ctx: ToolContext, doc: WorkflowDocument) -> None:
    before = doc.to_yaml()
    result = preview(
        doc, ctx, "update_jobs", {"jobs": [{"key": "notify-team", "name": "Tell the team"}]}
    )
    assert result.ok and NO_IMPACT in result.text
    assert result.data is not None and result.data["impact"] == []
    assert doc.to_yaml() == before


def test_a_preview_takes_no_ids_from_the_real_calls(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    preview(doc, ctx, "add_jobs", {"jobs": [{"name": "Archive", "adaptor": "common"}]})
    ok(doc, "add_jobs", {"jobs": [{"name": "Archive", "adaptor": "common"}]}, ctx)
    # referral_doc used ids 1-7: the real step gets 8, as if there had been no preview.
    assert doc.structure.jobs["archive"].id == fake_id(8)


def test_a_call_the_tool_would_refuse_is_an_error(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc,
        "preview_change",
        {"tool": "remove_jobs", "input": {"keys": ["nope"]}},
        ctx,
        "unknown_job",
    )
    assert "could not be made" in result.text and "check-coverage" in result.text


@pytest.mark.parametrize("tool", ["inspect_job_code", "test_run", "preview_change", "drop_all"])
def test_only_edit_tools_can_be_previewed(
    ctx: ToolContext, doc: WorkflowDocument, tool: str
) -> None:
    fails(doc, "preview_change", {"tool": tool, "input": {}}, ctx, "not_an_edit")


def test_simulate_runs_a_round_in_order_on_a_copy(ctx: ToolContext, doc: WorkflowDocument) -> None:
    before = doc.to_yaml()
    trial = simulate(
        doc,
        [
            ("update_jobs", {"jobs": [{"key": "check-coverage", "new_key": "coverage"}]}),
            ("remove_jobs", {"keys": ["coverage"]}),
            ("add_edges", {"edges": [{"source": "fetch-referrals", "target": "notify-team"}]}),
            ("remove_jobs", {"keys": ["no-such-step"]}),  # refused on the copy too
        ],
        ctx,
    )
    assert [r.ok for r in trial.results] == [True, True, True, False]
    assert trial.renamed == {"check-coverage": "coverage"}
    assert trial.impact.sentences == ["The step 'Check coverage' would be removed."]
    assert doc.to_yaml() == before
    assert "coverage" not in doc.structure.jobs and "check-coverage" in doc.structure.jobs


def test_renames_without_ids_are_followed(ctx: ToolContext) -> None:
    yaml = referral_doc(ctx).to_yaml()
    doc = WorkflowDocument.from_yaml(
        "\n".join(line for line in yaml.splitlines() if not line.startswith("    id:")) + "\n"
    )
    assert all(job.id is None for job in doc.structure.jobs.values())
    trial = simulate(
        doc, [("update_jobs", {"jobs": [{"key": "notify-team", "new_key": "tell-team"}]})], ctx
    )
    assert trial.results[0].ok and not trial.impact


# A call per structural tool: the ones with impact, and ones of each tool without.
SAMPLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("update_workflow", {"name": "Renamed"}),
    ("add_jobs", {"jobs": [{"name": "Archive", "adaptor": "common"}]}),
    ("update_jobs", {"jobs": [{"key": "notify-team", "new_key": "tell-team", "name": "Tell"}]}),
    ("remove_jobs", {"keys": ["notify-team"]}),
    ("add_edges", {"edges": [{"source": "fetch-referrals", "target": "notify-team"}]}),
    (
        "update_edges",
        {"edges": [{"source": "fetch-referrals", "target": "check-coverage", "enabled": False}]},
    ),
    ("remove_edges", {"edges": [{"source": "check-coverage", "target": "notify-team"}]}),
    ("set_trigger", {"type": "cron", "cron_expression": "0 9 * * *"}),
    ("set_trigger", {"type": "webhook", "enabled": True}),
]


@pytest.mark.parametrize(("tool", "args"), SAMPLE_CALLS, ids=[t for t, _ in SAMPLE_CALLS])
def test_only_tools_whose_policy_says_impact_have_any(tool: str, args: dict[str, Any]) -> None:
    ctx = make_context()
    doc = referral_doc(ctx)
    before = doc.structure
    ok(doc, tool, args, ctx)
    if impact(before, doc.structure):
        assert TOOLS[tool].impact, f"{tool} changed what runs but its spec says it cannot"


def test_the_impact_policy_is_on_the_tools_that_remove_disable_or_retype() -> None:
    flagged = {name for name, spec in TOOLS.items() if spec.impact}
    assert flagged == {
        "remove_jobs",
        "remove_edges",
        "update_edges",
        "set_trigger",
        "create_workflow",
    }
    assert all(TOOLS[name].structural for name in flagged)
