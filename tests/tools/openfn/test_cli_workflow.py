"""The CLI ``workflow.json`` export: the shape ``@openfn/runtime`` executes."""

from __future__ import annotations

import pytest

from tests.tools.openfn.helpers import BRANCHING
from tools.document import WorkflowDocument
from tools.document.openfn import slugify, to_cli_workflow
from tools.errors import DocumentError


def _cli(text: str) -> dict:
    return to_cli_workflow(WorkflowDocument.from_yaml(text))


def test_steps_next_conditions_and_start() -> None:
    workflow = _cli(BRANCHING)
    assert (workflow["id"], workflow["name"], workflow["start"]) == (
        "referral-intake",
        "Referral intake",
        "webhook",
    )
    assert [s["id"] for s in workflow["steps"]] == [
        "webhook",
        "check-coverage",
        "notify_team",
        "alert-coordinator",
    ]
    trigger, check, notify, alert = workflow["steps"]
    assert trigger == {
        "id": "webhook",
        "type": "webhook",
        "enabled": True,
        "webhook_reply": "after_completion",
        "webhook_response_config": {"success_code": 201},
        "next": {"check-coverage": {"condition": "always", "disabled": False}},
    }
    assert check == {
        "id": "check-coverage",
        "name": "Check coverage",
        "adaptors": ["@openfn/language-fhir@latest"],
        "expression": "get('Coverage');\n",
        "configuration": "epic-sandbox",
        "next": {
            # trimmed: the runtime compiles `return <condition>`
            "notify_team": {
                "condition": "!state.errors && state.data.plan === 'HMO'",
                "disabled": False,
                "label": "HMO",
            },
            "alert-coordinator": {"condition": "on_job_failure", "disabled": True},
        },
    }
    # A missing or blank body never leaves as blank.
    assert notify["expression"] == "// Add operations here"
    assert alert["expression"] == "// Add operations here"
    assert "next" not in notify and "configuration" not in notify


def test_without_trigger_start_is_the_first_root_step() -> None:
    doc = WorkflowDocument.from_yaml(
        "name: Two\njobs:\n"
        "  b: {name: Second, adaptor: '@openfn/language-common@latest'}\n"
        "  a: {name: First, adaptor: '@openfn/language-common@latest'}\n"
        "edges:\n  a->b: {source_job: a, target_job: b, condition_type: on_job_success,"
        " enabled: true}\n"
    )
    workflow = to_cli_workflow(doc)
    assert workflow["start"] == "first"
    assert [s["id"] for s in workflow["steps"]] == ["second", "first"]


def test_cron_cursor_is_named_by_step_id() -> None:
    doc = WorkflowDocument.from_yaml(
        "name: Nightly\njobs:\n"
        "  fetch: {id: j1, name: Fetch rows, adaptor: '@openfn/language-http@latest'}\n"
        "triggers:\n  cron: {id: t1, type: cron, enabled: false, cron_expression: '0 2 * * *',"
        " cron_cursor_job_id: j1}\n"
    )
    (trigger, _) = to_cli_workflow(doc)["steps"]
    assert trigger == {
        "id": "cron",
        "type": "cron",
        "cron_expression": "0 2 * * *",
        "enabled": False,
        "cron_cursor_job": "fetch-rows",
    }


@pytest.mark.parametrize(
    ("yaml_text", "code", "field"),
    [
        (
            "jobs:\n  a: {name: Check coverage, adaptor: x}\n"
            "  b: {name: check_coverage, adaptor: x}\n"
            "  c: {name: Check - coverage, adaptor: x}\n",
            "export_id_clash",
            "jobs.c",
        ),
        (
            "jobs:\n  a: {name: webhook, adaptor: x}\ntriggers:\n  t: {type: webhook}\n",
            "export_id_clash",
            "jobs.a",
        ),
        (
            "jobs:\n  a: {name: A, adaptor: x}\nedges:\n  a->zz: {source_job: a, target_job: zz}\n",
            "export_unknown_reference",
            "edges.a->zz.target_job",
        ),
        (
            "jobs:\n  a: {name: A, adaptor: x}\n  b: {name: B, adaptor: x}\n"
            "edges:\n  a->b: {source_job: a, target_job: b, condition_type: js_expression}\n",
            "export_invalid_edge",
            "edges.a->b.condition_expression",
        ),
        (
            "jobs:\n  a: {name: A, adaptor: x}\n"
            "triggers:\n  c: {type: cron, cron_expression: '* * * * *',"
            " cron_cursor_job_id: nope}\n",
            "export_unknown_reference",
            "triggers.c.cron_cursor_job_id",
        ),
    ],
)
def test_what_openfn_cannot_take_is_an_error_naming_the_field(
    yaml_text: str, code: str, field: str
) -> None:
    with pytest.raises(DocumentError) as caught:
        _cli(yaml_text)
    assert caught.value.code == code
    assert caught.value.details["field"] == field
    assert field in caught.value.message


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Check coverage", "check-coverage"),
        ("  Pull_referral v2 ", "pull_referral-v2"),
        ("Alert - coordinator", "alert-coordinator"),
        ("Émile's step!", "mile-s-step"),
    ],
)
def test_slugify_is_the_packages(text: str, slug: str) -> None:
    assert slugify(text) == slug
