"""Hand-off calls (tools.plan.handoff) run through the real tools on real documents: the
resulting structure is what OpenFn needs for A to hand its result to B's webhook."""

from __future__ import annotations

import pytest

from tests.tools.helpers import (
    build,
    edge,
    edge_pairs,
    fresh,
    make_context,
    ok,
    pinned,
    referral_doc,
)
from tools.base import ToolContext
from tools.catalogue.adaptors import load_catalogue
from tools.document import WorkflowDocument
from tools.errors import ToolInputError
from tools.jobcode import check_job_code, top_level_operations
from tools.plan import Contract, ProjectPlan, contracts, webhook_path
from tools.plan.handoff import (
    HANDOFF_CREDENTIAL,
    ToolCall,
    apply_calls,
    find_handoff,
    handoff_calls,
    handoff_code,
    receiving_calls,
    run_call,
    terminal_steps,
)

PATH = "acme-coverage"
CONTRACT = Contract(source="intake", target="coverage", data=["referral"], webhook_path=PATH)
HANDOFF = "hand-off-to-coverage-check"


@pytest.fixture
def ctx() -> ToolContext:
    return make_context()


def apply(doc: WorkflowDocument, calls: list[ToolCall], ctx: ToolContext) -> None:
    results = apply_calls(doc, calls, context=ctx)
    assert len(results) == len(calls)
    assert all(r.ok for r in results), [r.text for r in results]


def hand_off(doc: WorkflowDocument, ctx: ToolContext, contract: Contract = CONTRACT) -> str:
    """Apply the hand-off calls; return the hand-off step's key."""
    apply(doc, handoff_calls(doc.structure, contract, "Coverage check"), ctx)
    key = find_handoff(doc.structure, contract.webhook_path)
    assert key is not None
    return key


def branching_doc(ctx: ToolContext) -> WorkflowDocument:
    """webhook -> check; check -> approve (js), check -> reject (js), check -> alert (failure)."""
    guard = "!state.errors?.[upstreamStepId] && "
    return build(
        [
            (
                "create_workflow",
                {
                    "name": "Referral intake",
                    "jobs": [
                        {"name": "Check", "adaptor": "common"},
                        {"name": "Approve", "adaptor": "http"},
                        {"name": "Reject", "adaptor": "http"},
                        {"name": "Alert", "adaptor": "http"},
                    ],
                    "edges": [
                        {
                            "source": "check",
                            "target": "approve",
                            "condition_expression": guard + "(state.data.ok)",
                        },
                        {
                            "source": "check",
                            "target": "reject",
                            "condition_expression": guard + "(!state.data.ok)",
                        },
                        {"source": "check", "target": "alert", "condition_type": "on_job_failure"},
                    ],
                    "trigger": {"type": "webhook"},
                },
            )
        ],
        ctx,
    )


# --------------------------------------------------------------------------- the source


def test_the_hand_off_step_posts_the_result_to_the_webhook(ctx: ToolContext) -> None:
    doc = referral_doc(ctx)
    key = hand_off(doc, ctx)
    job = doc.structure.jobs[key]
    assert key == HANDOFF
    assert job.name == "Hand off to Coverage check"
    assert job.adaptor == pinned("http")
    assert job.credential == HANDOFF_CREDENTIAL == "lightning-webhooks"
    assert job.body == handoff_code(CONTRACT, "Coverage check")
    assert "post('/i/acme-coverage', state => JSON.stringify(state.data ?? {}));" in job.body
    http = load_catalogue().get("@openfn/language-http")
    assert http is not None and http.function("post") is not None
    assert check_job_code(job.body, http) == []
    assert top_level_operations(job.body) == ["post"]
    # The step runs with the credential: the source's trigger is left as it was.
    assert doc.structure.triggers["webhook"].custom_path is None


def test_a_failure_handler_does_not_hand_off_its_upstream_step_does(ctx: ToolContext) -> None:
    """referral: fetch -> check -> (on failure) notify. The run succeeds at check."""
    doc = referral_doc(ctx)
    key = hand_off(doc, ctx)
    assert [e for e in edge_pairs(doc) if e[1] == key] == [("check-coverage", key)]
    assert edge(doc, "check-coverage", key).condition_type == "on_job_success"
    assert terminal_steps(doc.structure) == ["check-coverage"]


def test_every_branch_that_ends_a_run_hands_off(ctx: ToolContext) -> None:
    doc = branching_doc(ctx)
    before = edge_pairs(doc)
    key = hand_off(doc, ctx)
    assert edge_pairs(doc) - before == {("approve", key), ("reject", key)}
    assert all(edge(doc, s, key).condition_type == "on_job_success" for s in ("approve", "reject"))


def test_a_chain_hands_off_after_its_last_step_only(ctx: ToolContext) -> None:
    doc = build(
        [
            (
                "create_workflow",
                {
                    "name": "Intake",
                    "jobs": [
                        {"name": "Extract", "adaptor": "http"},
                        {"name": "Load", "adaptor": "http"},
                    ],
                    "edges": [{"source": "extract", "target": "load"}],
                    "trigger": {"type": "cron", "cron_expression": "0 7 * * *"},
                },
            )
        ],
        ctx,
    )
    key = hand_off(doc, ctx)
    assert [s for s, t in edge_pairs(doc) if t == key] == ["load"]


def test_steps_without_a_trigger_each_hand_off(ctx: ToolContext) -> None:
    doc = build(
        [
            (
                "add_jobs",
                {
                    "jobs": [
                        {"name": "Extract", "adaptor": "http"},
                        {"name": "Load", "adaptor": "http"},
                    ]
                },
            )
        ],
        ctx,
    )
    key = hand_off(doc, ctx)
    assert edge_pairs(doc) == {("extract", key), ("load", key)}


def test_a_workflow_without_steps_hands_off_from_its_trigger(ctx: ToolContext) -> None:
    doc = build([("set_trigger", {"type": "webhook"})], ctx)
    key = hand_off(doc, ctx)
    assert edge_pairs(doc) == {("webhook", key)}
    assert edge(doc, "webhook", key).condition_type == "always"


def test_a_workflow_without_steps_or_trigger_gets_an_unconnected_step(ctx: ToolContext) -> None:
    doc = WorkflowDocument.new("Intake")
    calls = handoff_calls(doc.structure, CONTRACT, "Coverage check")
    assert [name for name, _ in calls] == ["add_jobs", "update_jobs", "edit_job_code"]
    apply(doc, calls, ctx)
    assert list(doc.structure.jobs) == [HANDOFF] and doc.structure.edges == {}
    # A trigger set later starts it (the one step nothing leads to).
    ok(doc, "set_trigger", {"type": "webhook"}, ctx)
    assert edge_pairs(doc) == {("webhook", HANDOFF)}


def test_a_rebuild_adds_no_second_hand_off(ctx: ToolContext) -> None:
    doc = referral_doc(ctx)
    key = hand_off(doc, ctx)
    assert handoff_calls(doc.structure, CONTRACT, "Coverage check") == []
    assert handoff_calls(fresh(doc).structure, CONTRACT, "Coverage check") == []
    # Renamed, re-keyed or rewired by the user, it is still that hand-off.
    ok(doc, "update_jobs", {"jobs": [{"key": key, "new_key": "post-on", "name": "Post on"}]}, ctx)
    assert find_handoff(doc.structure, PATH) == "post-on"
    assert handoff_calls(doc.structure, CONTRACT, "Coverage check") == []


def test_a_second_contract_hands_off_beside_the_first(ctx: ToolContext) -> None:
    doc = referral_doc(ctx)
    first = hand_off(doc, ctx)
    other = Contract(source="intake", target="billing", data=[], webhook_path="acme-billing")
    apply(doc, handoff_calls(doc.structure, other, "Billing"), ctx)
    second = find_handoff(doc.structure, "acme-billing")
    assert second == "hand-off-to-billing"
    assert {(s, t) for s, t in edge_pairs(doc) if t in (first, second)} == {
        ("check-coverage", first),
        ("check-coverage", second),
    }
    assert terminal_steps(doc.structure) == ["check-coverage"]


def test_names_follow_the_document_rules(ctx: ToolContext) -> None:
    doc = referral_doc(ctx)
    # A step of the same name that is no hand-off: the new one gets a free name and key.
    ok(
        doc,
        "add_jobs",
        {"jobs": [{"name": "Hand off to Coverage check", "adaptor": "common"}]},
        ctx,
    )
    calls = handoff_calls(doc.structure, CONTRACT, "Coverage check")
    assert calls[0][1]["jobs"] == [
        {"key": f"{HANDOFF}-2", "name": "Hand off to Coverage check 2", "adaptor": "http"}
    ]
    apply(doc, calls, ctx)
    odd = Contract(source="intake", target="elig", data=[], webhook_path="acme-elig")
    assert (
        handoff_calls(doc.structure, odd, "Coverage & eligibility (v2)")[0][1]["jobs"][0]["name"]
        == "Hand off to Coverage eligibility v2"
    )
    assert handoff_calls(doc.structure, odd, "???")[0][1]["jobs"][0]["name"] == "Hand off to elig"
    long_name = handoff_calls(doc.structure, odd, "x" * 300)[0][1]["jobs"][0]
    assert len(long_name["name"]) == 100
    apply(doc, handoff_calls(doc.structure, odd, "x" * 300), ctx)


def test_a_path_that_is_not_a_key_is_refused(ctx: ToolContext) -> None:
    doc = referral_doc(ctx)
    bad = Contract(source="a", target="b", data=[], webhook_path="b/../x")
    for make in (
        lambda: handoff_calls(doc.structure, bad, "B"),
        lambda: receiving_calls(doc.structure, bad),
    ):
        with pytest.raises(ToolInputError) as caught:
            make()
        assert caught.value.code == "invalid_webhook_path"


def test_a_workflow_cannot_hand_off_to_itself(ctx: ToolContext) -> None:
    doc = referral_doc(ctx)
    apply(doc, receiving_calls(doc.structure, CONTRACT), ctx)
    with pytest.raises(ToolInputError) as caught:
        handoff_calls(doc.structure, CONTRACT, "Coverage check")
    assert caught.value.code == "self_handoff"


def test_a_code_call_for_a_missing_step_or_bad_code_changes_nothing(ctx: ToolContext) -> None:
    doc = referral_doc(ctx)
    before = doc.to_yaml()
    missing = run_call(
        doc,
        (
            "edit_job_code",
            {"job_key": "nope", "edits": [{"action": "rewrite", "new_code": "fn(s => s);"}]},
        ),
        context=ctx,
    )
    assert (missing.ok, missing.error_code) == (False, "unknown_job")
    broken = run_call(
        doc,
        (
            "edit_job_code",
            {
                "job_key": "fetch-referrals",
                "edits": [{"action": "rewrite", "new_code": "post('/x', "}],
            },
        ),
        context=ctx,
    )
    assert broken.ok is False and broken.error_code is not None
    shapeless = run_call(
        doc, ("edit_job_code", {"job_key": "fetch-referrals", "edits": []}), context=ctx
    )
    assert (shapeless.ok, shapeless.error_code) == (False, "invalid_arguments")
    assert doc.to_yaml() == before
    # apply_calls stops at the first failure.
    results = apply_calls(
        doc, [("add_jobs", {"jobs": []}), ("set_trigger", {"type": "cron"})], context=ctx
    )
    assert [r.ok for r in results] == [False]


# --------------------------------------------------------------------------- the target


def test_the_target_webhook_gets_the_path_and_keeps_its_settings(ctx: ToolContext) -> None:
    doc = referral_doc(ctx)
    ok(
        doc,
        "set_trigger",
        {"type": "webhook", "webhook_reply": "after_completion", "enabled": True},
        ctx,
    )
    trigger_id = doc.structure.triggers["webhook"].id
    calls = receiving_calls(doc.structure, CONTRACT)
    assert calls == [("set_trigger", {"type": "webhook", "key": "webhook", "custom_path": PATH})]
    apply(doc, calls, ctx)
    trigger = doc.structure.triggers["webhook"]
    assert (trigger.custom_path, trigger.webhook_reply, trigger.enabled, trigger.id) == (
        PATH,
        "after_completion",
        True,
        trigger_id,
    )
    assert edge_pairs(doc) >= {("webhook", "fetch-referrals")}
    assert receiving_calls(doc.structure, CONTRACT) == []
    assert receiving_calls(fresh(doc).structure, CONTRACT) == []


def test_a_target_without_a_trigger_gets_a_webhook_that_starts_it(ctx: ToolContext) -> None:
    doc = build([("add_jobs", {"jobs": [{"name": "Check coverage", "adaptor": "http"}]})], ctx)
    apply(doc, receiving_calls(doc.structure, CONTRACT), ctx)
    trigger = doc.structure.triggers["webhook"]
    assert (trigger.type, trigger.custom_path) == ("webhook", PATH)
    assert edge_pairs(doc) == {("webhook", "check-coverage")}


def test_a_scheduled_target_becomes_a_webhook(ctx: ToolContext) -> None:
    doc = build(
        [
            ("add_jobs", {"jobs": [{"name": "Check coverage", "adaptor": "http"}]}),
            ("set_trigger", {"type": "cron", "cron_expression": "0 7 * * *"}),
        ],
        ctx,
    )
    apply(doc, receiving_calls(doc.structure, CONTRACT), ctx)
    assert list(doc.structure.triggers) == ["webhook"]
    trigger = doc.structure.triggers["webhook"]
    assert (trigger.type, trigger.custom_path, trigger.cron_expression) == ("webhook", PATH, None)
    assert edge_pairs(doc) == {("webhook", "check-coverage")}


TWO_TRIGGERS = """\
name: Coverage check
jobs:
  check:
    name: Check coverage
    adaptor: '@openfn/language-http@latest'
    body: get('/coverage');
triggers:
  {first}:
    type: {first}
    enabled: false
  {second}:
    type: webhook
    enabled: false
edges:
  {first}->check:
    source_trigger: {first}
    target_job: check
    condition_type: always
    enabled: true
"""


def test_of_several_triggers_the_one_webhook_receives(ctx: ToolContext) -> None:
    doc = WorkflowDocument.from_yaml(
        TWO_TRIGGERS.format(first="cron", second="hook").replace(
            "type: cron\n", "type: cron\n    cron_expression: 0 7 * * *\n"
        )
    )
    assert receiving_calls(doc.structure, CONTRACT) == [
        ("set_trigger", {"type": "webhook", "key": "hook", "custom_path": PATH})
    ]
    apply(doc, receiving_calls(doc.structure, CONTRACT), ctx)
    assert doc.structure.triggers["hook"].custom_path == PATH
    assert doc.structure.triggers["cron"].cron_expression == "0 7 * * *"


def test_two_webhooks_are_ambiguous() -> None:
    doc = WorkflowDocument.from_yaml(TWO_TRIGGERS.format(first="webhook", second="hook"))
    with pytest.raises(ToolInputError) as caught:
        receiving_calls(doc.structure, CONTRACT)
    assert caught.value.code == "ambiguous_trigger"


# --------------------------------------------------------------------------- from a plan


def test_a_plan_dependency_becomes_a_working_hand_off(ctx: ToolContext) -> None:
    plan = ProjectPlan.model_validate(
        {
            "summary": "Referrals are taken in, then their coverage is checked.",
            "workflows": [
                {
                    "key": "intake",
                    "name": "Referral intake",
                    "purpose": "Take referrals in.",
                    "trigger": {"type": "webhook"},
                    "outputs": ["referral"],
                },
                {
                    "key": "coverage",
                    "name": "Coverage check",
                    "purpose": "Check the referral's coverage.",
                    "trigger": {"type": "webhook"},
                    "inputs": ["referral"],
                    "depends_on": ["intake"],
                },
            ],
            "order": ["intake", "coverage"],
        }
    )
    (contract,) = contracts(plan, "acme")
    source, target = (
        referral_doc(ctx),
        build(
            [
                (
                    "create_workflow",
                    {
                        "name": "Coverage check",
                        "jobs": [{"name": "Check coverage", "adaptor": "http"}],
                        "trigger": {"type": "webhook"},
                    },
                )
            ],
            make_context(100),
        ),
    )
    apply(target, receiving_calls(target.structure, contract), ctx)
    key = hand_off(source, ctx, contract)
    path = target.structure.triggers["webhook"].custom_path
    assert path == webhook_path("acme", "coverage") == contract.webhook_path
    assert f"post('/i/{path}'" in (source.structure.jobs[key].body or "")
