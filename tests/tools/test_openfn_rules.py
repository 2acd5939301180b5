"""Validation OpenFn would demand: unique ids, reachable steps, conditions that parse."""

from __future__ import annotations

import pytest

from tests.tools.helpers import call, fails, make_context, ok, referral_doc
from tools.document import WorkflowDocument
from tools.document.conditions import (
    SUCCESS_GUARD,
    expression_problem,
    on_success_and,
    unguarded,
)
from tools.document.importing import check_unique_ids, mint_missing_ids
from tools.document.openfn import import_workflows
from tools.document.redaction import render_structure
from tools.errors import DocumentError
from tools.registry import document_problems

DUPLICATE_IDS = """\
name: Dup
jobs:
  a: {id: same-id, name: A, adaptor: '@openfn/language-common@latest'}
  b: {id: same-id, name: B, adaptor: '@openfn/language-common@latest'}
triggers:
  webhook: {id: trigger-id, type: webhook, enabled: false}
edges:
  webhook->a: {id: trigger-id, source_trigger: webhook, target_job: a, condition_type: always}
  a->b: {source_job: a, target_job: b, condition_type: on_job_success}
"""


# --------------------------------------------------------------------------- duplicate ids


def test_duplicate_ids_are_an_error_on_import_and_nothing_is_minted() -> None:
    doc = WorkflowDocument.from_yaml(DUPLICATE_IDS)
    before = doc.to_yaml()
    with pytest.raises(DocumentError) as caught:
        mint_missing_ids(doc, lambda: "minted")
    error = caught.value
    assert error.code == "duplicate_id"
    assert "'same-id' on jobs.a, jobs.b" in error.message
    # Ids are unique across sections: a trigger and an edge sharing one is refused too.
    assert "'trigger-id' on triggers.webhook, edges.webhook->a" in error.message
    assert error.details["ids"] == ["same-id", "trigger-id"]
    assert doc.to_yaml() == before  # the edge without an id did not get one


def test_unique_ids_pass_and_missing_ones_are_minted() -> None:
    doc = WorkflowDocument.from_yaml(DUPLICATE_IDS.replace("id: same-id, name: B", "name: B"))
    doc = WorkflowDocument.from_yaml(doc.to_yaml().replace("{id: trigger-id, source", "{source"))
    check_unique_ids(doc)
    counter = iter(["m1", "m2", "m3"])
    assert mint_missing_ids(doc, lambda: next(counter)) == 3
    assert not [p for p in document_problems(doc) if p.code == "duplicate_id"]


def test_duplicate_ids_are_a_validation_problem() -> None:
    doc = WorkflowDocument.from_yaml(DUPLICATE_IDS)
    found = [p for p in document_problems(doc) if p.code == "duplicate_id"]
    assert [p.subject for p in found] == ["ids.same-id", "ids.trigger-id"]
    assert all(p.blocking for p in found)


# --------------------------------------------------------------------------- reachability


def test_a_step_no_trigger_reaches_is_noted_in_the_tool_result() -> None:
    ctx = make_context()
    doc = referral_doc(ctx)
    result = ok(doc, "add_jobs", {"jobs": [{"name": "Archive", "adaptor": "common"}]}, ctx)
    assert "Note:" in result.text
    assert "Step 'archive' is not reached from any trigger" in result.text
    assert "never runs" in result.text
    problems = [p for p in document_problems(doc) if p.code == "unreachable_step"]
    assert [(p.subject, p.blocking) for p in problems] == [("jobs.archive", False)]
    edge = {"source": "notify-team", "target": "archive"}
    connected = ok(doc, "add_edges", {"edges": [edge]}, ctx)
    assert "not reached" not in connected.text
    assert not [p for p in document_problems(doc) if p.code == "unreachable_step"]


def test_a_step_behind_a_disabled_edge_is_unreachable() -> None:
    ctx = make_context()
    doc = referral_doc(ctx)
    result = ok(
        doc,
        "update_edges",
        {"edges": [{"source": "check-coverage", "target": "notify-team", "enabled": False}]},
        ctx,
    )
    assert "Step 'notify-team' is not reached from any trigger (only a disabled edge" in (
        result.text
    )


def test_no_unreachable_notes_while_the_trigger_starts_nothing() -> None:
    """An unconnected trigger has its own note; every step would be unreachable."""
    ctx = make_context()
    doc = WorkflowDocument.new("W")
    ok(doc, "add_jobs", {"jobs": [{"name": "A", "adaptor": "common"}]}, ctx)
    codes = {p.code for p in document_problems(doc)}
    assert "unreachable_step" not in codes


# --------------------------------------------------------------------------- conditions


@pytest.mark.parametrize(
    ("expression", "line", "column", "says"),
    [
        ("state.data.x === 'a", 1, 18, "unterminated string"),
        ("state.data.urgent ===", 1, 22, "expression is expected"),
        ("state.data.plan === = 'x'", 1, 21, "unexpected '='"),
        ("state.data.items.filter(x => x.ok", 1, 24, "never closed"),
        ("state.data.a; state.data.b", 1, 15, "one JavaScript expression"),
        ("if (state.data.a) true", 1, 1, "one JavaScript expression"),
        ("// the plan\nstate.data.plan", 2, 1, "first line"),
    ],
)
def test_condition_parse_errors_have_a_position(
    expression: str, line: int, column: int, says: str
) -> None:
    problem = expression_problem(expression)
    assert problem is not None
    assert (problem.line, problem.column) == (line, column), problem
    assert says in problem.message


@pytest.mark.parametrize(
    "expression",
    [
        "state.data.plan === 'BlueCross HMO'",
        "state.data.total > 10;",
        "!state.errors?.[upstreamStepId] && (state.data.a || state.data.b)",
        "state.data.a\n  && state.data.b",
        "state.data.ok // a trailing comment",
    ],
)
def test_good_conditions_parse(expression: str) -> None:
    assert expression_problem(expression) is None


def test_an_edge_whose_condition_does_not_parse_is_refused_with_its_position() -> None:
    ctx = make_context()
    doc = referral_doc(ctx)
    edge = {
        "source": "fetch-referrals",
        "target": "notify-team",
        "condition_type": "js_expression",
        "condition_expression": "state.data.urgent ===",
    }
    result = fails(doc, "add_edges", {"edges": [edge]}, ctx, "invalid_condition_expression")
    assert "condition_expression is not a JavaScript expression" in result.text
    assert "(line 1, column 22)" in result.text
    good = {**edge, "condition_expression": on_success_and("state.data.urgent === true")}
    ok(doc, "add_edges", {"edges": [good]}, ctx)


def test_an_imported_condition_that_does_not_parse_is_a_problem() -> None:
    ctx = make_context()
    doc = referral_doc(ctx)
    text = doc.to_yaml().replace(
        "condition_type: on_job_failure",
        "condition_type: js_expression\n    condition_expression: state.data.(",
    )
    broken = WorkflowDocument.from_yaml(text)
    problems = [p for p in document_problems(broken) if p.code == "invalid_condition_expression"]
    assert [p.subject for p in problems] == ["edges.check-coverage->notify-team"]
    assert "line 1, column 12" in problems[0].message
    # Repairable one call at a time: another edit is not blocked by the old problem.
    result = call(broken, "update_workflow", {"name": "Renamed"}, ctx)
    assert result.ok, result.text


def test_the_success_guard_is_the_runtimes_own() -> None:
    assert SUCCESS_GUARD == "!state.errors?.[upstreamStepId]"
    guarded = on_success_and("state.data.a || state.data.b")
    assert guarded == "!state.errors?.[upstreamStepId] && (state.data.a || state.data.b)"
    assert unguarded(guarded) == "state.data.a || state.data.b"
    # An expression that decides on failure itself is kept as written.
    assert on_success_and("Boolean(state.errors)") == "Boolean(state.errors)"
    assert unguarded("state.data.a") is None


LIGHTNING_DUPLICATE_IDS = """\
name: p
workflows:
  w:
    name: W
    jobs:
      a: {id: 7d0e9b2c-0000-4000-8000-000000000001, name: A, adaptor: '@openfn/language-common@latest', body: 'fn(s => s);'}
      b: {id: 7d0e9b2c-0000-4000-8000-000000000001, name: B, adaptor: '@openfn/language-common@latest', body: 'fn(s => s);'}
    triggers:
      webhook: {type: webhook, enabled: true}
    edges:
      webhook->a: {source_trigger: webhook, target_job: a, condition_type: always, enabled: true}
"""  # noqa: E501


def test_duplicate_ids_are_an_error_on_every_import_format() -> None:
    counter = iter(f"00000000-0000-4000-9000-{n:012d}" for n in range(1, 99))
    with pytest.raises(DocumentError) as caught:
        import_workflows("lightning", LIGHTNING_DUPLICATE_IDS, new_id=lambda: next(counter))
    # The format's builder names the field of the second entry holding the id.
    assert caught.value.details["field"] == "workflows.w.jobs.b.id"
    assert "ids are unique" in caught.value.message
    fine = LIGHTNING_DUPLICATE_IDS.replace("000000000001, name: B", "000000000002, name: B")
    (doc,) = import_workflows("lightning", fine, new_id=lambda: next(counter))
    assert set(doc.structure.jobs) == {"a", "b"}


def test_a_step_condition_without_the_guard_is_noted_for_the_model() -> None:
    ctx = make_context()
    doc = referral_doc(ctx)
    edge = {
        "source": "fetch-referrals",
        "target": "notify-team",
        "condition_type": "js_expression",
        "condition_expression": "state.data.urgent",
    }
    result = ok(doc, "add_edges", {"edges": [edge]}, ctx)
    assert "is also checked when 'fetch-referrals' fails" in result.text
    assert "!state.errors?.[upstreamStepId] && (X)" in result.text
    noted = [p for p in document_problems(doc) if p.code == "unguarded_condition"]
    assert [(p.subject, p.blocking) for p in noted] == [
        ("edges.fetch-referrals->notify-team", False)
    ]
    guarded = {**edge, "condition_expression": on_success_and("state.data.urgent")}
    done = ok(doc, "update_edges", {"edges": [guarded]}, ctx)
    assert "also checked" not in done.text
    # An expression that decides on failure itself needs no guard.
    failure = {**edge, "condition_expression": "Boolean(state.errors?.[upstreamStepId])"}
    assert "also checked" not in ok(doc, "update_edges", {"edges": [failure]}, ctx).text


def test_the_chart_the_model_gets_each_turn_names_steps_no_trigger_reaches() -> None:
    ctx = make_context()
    doc = referral_doc(ctx)
    assert "Not reached from any trigger" not in render_structure(doc.structure)
    ok(doc, "add_jobs", {"jobs": [{"name": "Archive", "adaptor": "common"}]}, ctx)
    chart = render_structure(doc.structure)
    assert chart.splitlines()[-1] == "Not reached from any trigger, so never run: archive"
