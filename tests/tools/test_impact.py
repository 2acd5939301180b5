"""Impact from the document graph (DESIGN §5c): what a change does to what runs, by name.

Every case edits a real workflow through the real tools (``run_tool``) and compares
the structures before and after, as the confirmation and the proposals do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tools.helpers import build, make_context, ok
from tools.base import ToolContext
from tools.document import WorkflowDocument
from tools.document.impact import Impact, impact
from tools.document.structure import Structure

# webhook -> Pull referral -> Check insurance -+-(HMO)-> Submit prior auth -+-> Attach documents
#                                              +-(else)-> Verify coverage --+        |
#                                              +-(fails)-> Alert staff        Notify clinic
#                                                                                    |
#                                                                          Schedule appointment
_HMO = "!state.errors?.['check-insurance'] && (state.data.plan === 'HMO')"
_NOT_HMO = "!state.errors?.['check-insurance'] && (state.data.plan !== 'HMO')"
REFERRAL: dict[str, Any] = {
    "name": "Referral intake",
    "jobs": [
        {"name": "Pull referral", "adaptor": "fhir"},
        {"name": "Check insurance", "adaptor": "http"},
        {"name": "Submit prior auth", "adaptor": "http"},
        {"name": "Verify coverage", "adaptor": "http"},
        {"name": "Attach documents", "adaptor": "fhir"},
        {"name": "Notify clinic", "adaptor": "gmail"},
        {"name": "Schedule appointment", "adaptor": "http"},
        {"name": "Alert staff", "adaptor": "gmail"},
    ],
    "edges": [
        {"source": "pull-referral", "target": "check-insurance"},
        {
            "source": "check-insurance",
            "target": "submit-prior-auth",
            "condition_type": "js_expression",
            "condition_expression": _HMO,
        },
        {
            "source": "check-insurance",
            "target": "verify-coverage",
            "condition_type": "js_expression",
            "condition_expression": _NOT_HMO,
        },
        {
            "source": "check-insurance",
            "target": "alert-staff",
            "condition_type": "on_job_failure",
        },
        {"source": "submit-prior-auth", "target": "attach-documents"},
        {"source": "verify-coverage", "target": "attach-documents"},
        {"source": "attach-documents", "target": "notify-clinic"},
        {"source": "notify-clinic", "target": "schedule-appointment"},
    ],
    "trigger": {"type": "webhook"},
}


@pytest.fixture
def ctx() -> ToolContext:
    return make_context()


def referral(ctx: ToolContext) -> WorkflowDocument:
    return build([("create_workflow", REFERRAL)], ctx)


def after(
    doc: WorkflowDocument, ctx: ToolContext, *calls: tuple[str, Mapping[str, Any]]
) -> tuple[Structure, Impact]:
    """The impact of running ``calls`` on ``doc`` (in order), through the real tools."""
    before = doc.structure
    for tool, args in calls:
        ok(doc, tool, args, ctx)
    return before, impact(before, doc.structure)


def names(refs: Any) -> list[str]:
    return [ref.name for ref in refs]


def test_removing_the_coverage_check_names_every_step_it_orphans(ctx: ToolContext) -> None:
    doc = referral(ctx)
    _, result = after(doc, ctx, ("remove_jobs", {"keys": ["check-insurance"]}))
    assert names(result.removed_steps) == ["Check insurance"]
    assert names(result.unreachable_steps) == [
        "Submit prior auth",
        "Verify coverage",
        "Attach documents",
        "Notify clinic",
        "Schedule appointment",
        "Alert staff",
    ]
    # The edges went with the removed step: its removal says so, they are not listed.
    assert result.removed_edges == () and result.disabled_edges == ()
    assert result.sentences == [
        "The step 'Check insurance' would be removed.",
        "'Submit prior auth' and 5 more steps would no longer run: 'Verify coverage', "
        "'Attach documents', 'Notify clinic', 'Schedule appointment', 'Alert staff' "
        "(no trigger would reach them).",
    ]


def test_branches_that_stay_reachable_are_not_named(ctx: ToolContext) -> None:
    doc = referral(ctx)
    _, result = after(doc, ctx, ("remove_jobs", {"keys": ["notify-clinic"]}))
    assert names(result.unreachable_steps) == ["Schedule appointment"]
    text = result.text
    for kept in ("Pull referral", "Check insurance", "Verify coverage", "Alert staff"):
        assert kept not in text
    assert result.text == (
        "The step 'Notify clinic' would be removed. 'Schedule appointment' would no longer "
        "run (no trigger would reach it)."
    )


def test_a_step_reachable_by_a_second_path_is_not_named(ctx: ToolContext) -> None:
    doc = referral(ctx)
    # Attach documents is also reached through Verify coverage.
    _, result = after(doc, ctx, ("remove_jobs", {"keys": ["submit-prior-auth"]}))
    assert names(result.removed_steps) == ["Submit prior auth"]
    assert result.unreachable_steps == ()
    assert "Attach documents" not in result.text


def test_steps_unreachable_before_are_not_blamed_on_the_change(ctx: ToolContext) -> None:
    doc = referral(ctx)
    ok(doc, "add_jobs", {"jobs": [{"name": "Archive", "adaptor": "common"}]}, ctx)  # no edge in
    ok(doc, "add_edges", {"edges": [{"source": "archive", "target": "schedule-appointment"}]}, ctx)
    _, result = after(doc, ctx, ("remove_jobs", {"keys": ["notify-clinic"]}))
    # Schedule appointment is still the target of Archive's edge, but no trigger reaches
    # Archive: it is named; Archive, unreachable already, is not.
    assert names(result.unreachable_steps) == ["Schedule appointment"]
    assert "Archive" not in result.text


def test_a_workflow_no_trigger_started_blames_nothing(ctx: ToolContext) -> None:
    spec = {k: v for k, v in REFERRAL.items() if k != "trigger"}
    doc = build([("create_workflow", spec)], ctx)
    _, result = after(doc, ctx, ("remove_jobs", {"keys": ["check-insurance"]}))
    assert result.unreachable_steps == ()
    assert names(result.removed_steps) == ["Check insurance"]


def test_removing_a_step_and_reconnecting_its_neighbours_loses_nothing_else(
    ctx: ToolContext,
) -> None:
    doc = referral(ctx)
    _, result = after(
        doc,
        ctx,
        ("remove_jobs", {"keys": ["notify-clinic"]}),
        (
            "add_edges",
            {"edges": [{"source": "attach-documents", "target": "schedule-appointment"}]},
        ),
    )
    assert result.sentences == ["The step 'Notify clinic' would be removed."]


def test_inserting_a_step_has_no_impact(ctx: ToolContext) -> None:
    doc = referral(ctx)
    _, result = after(
        doc,
        ctx,
        ("add_jobs", {"jobs": [{"name": "Dedupe", "adaptor": "common"}]}),
        (
            "update_edges",
            {
                "edges": [
                    {"source": "pull-referral", "target": "check-insurance", "new_target": "dedupe"}
                ]
            },
        ),
        ("add_edges", {"edges": [{"source": "dedupe", "target": "check-insurance"}]}),
    )
    assert not result
    assert result.sentences == [] and result.text == ""


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        pytest.param(
            [("update_jobs", {"jobs": [{"key": "notify-clinic", "new_key": "tell-clinic"}]})],
            [],
            id="rekey",
        ),
        pytest.param(
            [("update_jobs", {"jobs": [{"key": "notify-clinic", "name": "Email clinic"}]})],
            [],
            id="rename",
        ),
        pytest.param(
            [("add_jobs", {"jobs": [{"name": "Audit", "adaptor": "common"}]})], [], id="add"
        ),
        pytest.param(
            [("set_trigger", {"type": "webhook", "enabled": True})], [], id="enable-trigger"
        ),
        pytest.param(
            [
                (
                    "update_edges",
                    {
                        "edges": [
                            {
                                "source": "notify-clinic",
                                "target": "schedule-appointment",
                                "condition_type": "always",
                            }
                        ]
                    },
                )
            ],
            [],
            id="condition-change",
        ),
        pytest.param(
            [
                (
                    "remove_edges",
                    {"edges": [{"source": "notify-clinic", "target": "schedule-appointment"}]},
                )
            ],
            [
                "'Schedule appointment' would no longer run (no trigger would reach it).",
                "The connection from 'Notify clinic' to 'Schedule appointment' would be removed.",
            ],
            id="disconnect-last",
        ),
        pytest.param(
            [
                (
                    "update_edges",
                    {
                        "edges": [
                            {
                                "source": "attach-documents",
                                "target": "notify-clinic",
                                "enabled": False,
                            }
                        ]
                    },
                )
            ],
            [
                "'Notify clinic' and 1 more step would no longer run: 'Schedule appointment' "
                "(no trigger would reach them).",
                "The connection from 'Attach documents' to 'Notify clinic' would be disabled.",
            ],
            id="disable",
        ),
        pytest.param(
            [
                (
                    "remove_edges",
                    {"edges": [{"source": "submit-prior-auth", "target": "attach-documents"}]},
                )
            ],
            ["The connection from 'Submit prior auth' to 'Attach documents' would be removed."],
            id="disconnect-join",  # Attach documents is still reached: only the edge is named
        ),
        pytest.param(
            [("set_trigger", {"type": "cron", "cron_expression": "0 9 * * *"})],
            ["The webhook trigger would become a cron trigger."],
            id="trigger-type",  # rekeyed webhook -> cron, same id: not removed
        ),
        pytest.param(
            [
                (
                    "update_edges",
                    {
                        "edges": [
                            {
                                "source": "webhook",
                                "target": "pull-referral",
                                "new_target": "check-insurance",
                            }
                        ]
                    },
                )
            ],
            [
                "'Pull referral' would no longer run (no trigger would reach it).",
                # The edge stays (same id), pointed elsewhere: said so, not "removed".
                "The connection from the webhook trigger to 'Pull referral' would go to "
                "'Check insurance' instead.",
            ],
            id="retarget-trigger",
        ),
    ],
)
def test_impact_of_single_changes(
    ctx: ToolContext, calls: list[tuple[str, dict[str, Any]]], expected: list[str]
) -> None:
    doc = referral(ctx)
    _, result = after(doc, ctx, *calls)
    assert result.sentences == expected
    assert bool(result) is bool(expected)


def test_a_failure_branch_rerouted_through_a_success_path_is_lost(ctx: ToolContext) -> None:
    doc = referral(ctx)
    # Alert staff ran when Check insurance failed; now only after Verify coverage succeeds.
    _, result = after(
        doc,
        ctx,
        ("remove_edges", {"edges": [{"source": "check-insurance", "target": "alert-staff"}]}),
        ("add_edges", {"edges": [{"source": "verify-coverage", "target": "alert-staff"}]}),
    )
    assert result.unreachable_steps == ()
    assert [e.label for e in result.removed_edges] == ["from 'Check insurance' to 'Alert staff'"]


def test_moving_a_step_names_the_order_it_breaks(ctx: ToolContext) -> None:
    doc = referral(ctx)
    # Notify clinic <-> Schedule appointment swap places.
    _, result = after(
        doc,
        ctx,
        (
            "remove_edges",
            {"edges": [{"source": "notify-clinic", "target": "schedule-appointment"}]},
        ),
        (
            "update_edges",
            {
                "edges": [
                    {
                        "source": "attach-documents",
                        "target": "notify-clinic",
                        "new_target": "schedule-appointment",
                    }
                ]
            },
        ),
        ("add_edges", {"edges": [{"source": "schedule-appointment", "target": "notify-clinic"}]}),
    )
    assert result.unreachable_steps == () and result.removed_steps == ()
    # Attach documents still leads to Notify clinic (through Schedule appointment); Notify
    # clinic no longer leads to Schedule appointment.
    assert [e.label for e in result.removed_edges] == [
        "from 'Notify clinic' to 'Schedule appointment'"
    ]


TWO_TRIGGERS = """\
name: Two ways in
jobs:
  a:
    id: j-a
    name: Alpha
    adaptor: '@openfn/language-common@latest'
  b:
    id: j-b
    name: Beta
    adaptor: '@openfn/language-common@latest'
triggers:
  webhook:
    id: t-1
    type: webhook
  nightly:
    id: t-2
    type: cron
    cron_expression: 0 1 * * *
edges:
  webhook->a:
    id: e-1
    source_trigger: webhook
    target_job: a
    condition_type: always
  nightly->b:
    id: e-2
    source_trigger: nightly
    target_job: b
    condition_type: always
"""


def test_a_removed_trigger_is_named_and_what_only_it_started() -> None:
    before = WorkflowDocument.from_yaml(TWO_TRIGGERS).structure
    after_yaml = (
        TWO_TRIGGERS.split("  nightly:\n")[0]
        + TWO_TRIGGERS.split("cron_expression: 0 1 * * *\n")[1].split("  nightly->b:")[0]
    )
    result = impact(before, WorkflowDocument.from_yaml(after_yaml).structure)
    assert result.sentences == [
        "The cron trigger 'nightly' would be removed.",
        "'Beta' would no longer run (no trigger would reach it).",
    ]


def test_steps_without_ids_are_followed_through_renames() -> None:
    yaml = TWO_TRIGGERS.replace("    id: j-a\n", "")
    before = WorkflowDocument.from_yaml(yaml).structure
    renamed = WorkflowDocument.from_yaml(
        yaml.replace("  a:\n", "  alpha:\n").replace("target_job: a\n", "target_job: alpha\n")
    ).structure
    assert impact(before, renamed, renamed={"a": "alpha"}) == Impact()
    # Without the rename, an id-less step under a new key is a removal and an addition.
    assert names(impact(before, renamed).removed_steps) == ["Alpha"]


def test_the_same_key_with_another_id_is_a_new_step() -> None:
    before = WorkflowDocument.from_yaml(TWO_TRIGGERS).structure
    readded = WorkflowDocument.from_yaml(TWO_TRIGGERS.replace("id: j-a", "id: j-new")).structure
    assert names(impact(before, readded).removed_steps) == ["Alpha"]


# --- property: unreachable steps are exactly those the change cut off -----------------------


@st.composite
def chains(draw: st.DrawFn) -> tuple[int, list[tuple[int, int]], int]:
    """A random DAG over steps 0..n-1 (edges only forward, step 0 started by the trigger)
    and a step to remove."""
    n = draw(st.integers(min_value=2, max_value=8))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=12))
    removed = draw(st.integers(min_value=0, max_value=n - 1))
    return n, edges, removed


def _reach(n: int, edges: list[tuple[int, int]], gone: int | None = None) -> set[int]:
    seen, todo = set(), [0] if gone != 0 else []
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        todo += [j for i, j in edges if i == node and j != gone]
    return seen


@settings(max_examples=60, deadline=None)
@given(chains())
def test_removing_any_step_names_exactly_the_steps_it_cut_off(
    case: tuple[int, list[tuple[int, int]], int],
) -> None:
    n, pairs, removed = case
    ctx = make_context()
    spec = {
        "name": "Random",
        "jobs": [{"name": f"Step {i}", "adaptor": "common"} for i in range(n)],
        "edges": [
            {"source": "webhook", "target": "step-0"},
            *({"source": f"step-{i}", "target": f"step-{j}"} for i, j in pairs),
        ],
        "trigger": {"type": "webhook"},
    }
    doc = build([("create_workflow", spec)], ctx)
    _, result = after(doc, ctx, ("remove_jobs", {"keys": [f"step-{removed}"]}))
    cut_off = _reach(n, pairs) - _reach(n, pairs, gone=removed) - {removed}
    assert {ref.key for ref in result.unreachable_steps} == {f"step-{i}" for i in cut_off}
    assert names(result.removed_steps) == [f"Step {removed}"]
    for i in cut_off:
        assert f"'Step {i}'" in result.text
