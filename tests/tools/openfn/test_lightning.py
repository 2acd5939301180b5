"""Lightning project.yaml export and import (the package's own reading is in tests/external)."""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from tests.tools.openfn.helpers import BRANCHING, new_ids
from tools.document import WorkflowDocument
from tools.document.openfn import (
    from_lightning_yaml,
    import_workflows,
    to_lightning_project,
    to_lightning_yaml,
)
from tools.errors import DocumentError


def test_project_wrapper_keys_and_fields() -> None:
    project = to_lightning_project([WorkflowDocument.from_yaml(BRANCHING)])
    assert list(project) == ["name", "credentials", "workflows"]
    assert project["credentials"] == {}
    workflow = project["workflows"]["referral-intake"]
    assert list(workflow) == ["name", "jobs", "triggers", "edges"]
    assert workflow["jobs"] == {
        "check-coverage": {
            "name": "Check coverage",
            "adaptor": "@openfn/language-fhir@latest",
            "credential": "epic-sandbox",
            "body": "get('Coverage');\n",
        },
        "notify_team": {
            "name": "Notify_team",
            "adaptor": "@openfn/language-http@latest",
            "body": "// Add operations here",
        },
        "alert-coordinator": {
            "name": "Alert - coordinator",
            "adaptor": "@openfn/language-gmail@latest",
            "body": "// Add operations here",
        },
    }
    assert workflow["triggers"] == {
        "webhook": {
            "type": "webhook",
            "enabled": True,
            "webhook_reply": "after_completion",
            "webhook_response_config": {"success_code": 201},
        }
    }
    assert workflow["edges"] == {
        "webhook->check-coverage": {
            "source_trigger": "webhook",
            "target_job": "check-coverage",
            "condition_type": "always",
            "enabled": True,
        },
        "check-coverage->notify_team": {
            "source_job": "check-coverage",
            "target_job": "notify_team",
            "condition_type": "js_expression",
            "condition_label": "HMO",
            # verbatim in project.yaml, unlike the CLI export
            "condition_expression": "\n!state.errors && state.data.plan === 'HMO'\n",
            "enabled": True,
        },
        "check-coverage->alert-coordinator": {
            "source_job": "check-coverage",
            "target_job": "alert-coordinator",
            "condition_type": "on_job_failure",
            "enabled": False,
        },
    }


def test_a_key_rename_changes_nothing_in_the_export() -> None:
    renamed = BRANCHING.replace("  check:", "  coverage:").replace(
        "job: check\n", "job: coverage\n"
    )
    renamed = renamed.replace("inbound->check", "inbound->coverage").replace(
        "check->", "coverage->"
    )
    assert WorkflowDocument.from_yaml(renamed).structure.jobs["coverage"].name == "Check coverage"
    assert to_lightning_yaml([WorkflowDocument.from_yaml(renamed)]) == to_lightning_yaml(
        [WorkflowDocument.from_yaml(BRANCHING)]
    )


def test_yaml_text_loads_back_to_the_same_data() -> None:
    doc = WorkflowDocument.from_yaml(BRANCHING)
    text = to_lightning_yaml([doc])
    assert YAML(typ="safe").load(text) == to_lightning_project([doc])
    assert "body: |\n" in text  # multi-line bodies as block scalars


def test_export_then_import_gives_the_same_structure() -> None:
    doc = WorkflowDocument.from_yaml(BRANCHING)
    (back,) = from_lightning_yaml(to_lightning_yaml([doc]), new_id=new_ids())
    assert to_lightning_yaml([back]) == to_lightning_yaml([doc])
    jobs = back.structure.jobs
    assert list(jobs) == ["check-coverage", "notify_team", "alert-coordinator"]
    assert jobs["check-coverage"].credential == "epic-sandbox"
    assert all(j.id for j in jobs.values())
    assert back.structure.triggers["webhook"].webhook_response_config == {"success_code": 201}


def test_several_workflows_and_clashing_ones() -> None:
    one = WorkflowDocument.from_yaml(BRANCHING)
    two = WorkflowDocument.from_yaml(BRANCHING.replace("name: Referral intake", "name: Other"))
    project = to_lightning_project([one, two], project_name="Clinic")
    assert (project["name"], list(project["workflows"])) == ("Clinic", ["referral-intake", "other"])
    docs = import_workflows("lightning", to_lightning_yaml([one, two]), new_id=new_ids())
    assert [d.name for d in docs] == ["Referral intake", "Other"]
    with pytest.raises(DocumentError) as caught:
        to_lightning_project([one, WorkflowDocument.from_yaml(BRANCHING)])
    assert caught.value.code == "export_id_clash"


LIGHTNING_EXPORT = """\
name: openhie-project
description: Some sample
credentials:
  me@example.org-DHIS2:
    name: DHIS2
    owner: me@example.org
workflows:
  OpenHIE-Workflow:
    name: OpenHIE Workflow
    jobs:
      FHIR-standard-Data-with-change:
        name: FHIR standard Data with change
        adaptor: '@openfn/language-http@latest'
        credential: me@example.org-DHIS2
        # globals:
        body: |
          fn(state => state);
      Send-to-OpenHIM:
        name: Send to OpenHIM
        adaptor: '@openfn/language-http@latest'
        body: |
          fn(state => state);
    triggers:
      webhook:
        type: webhook
        enabled: true
    edges:
      webhook->FHIR-standard-Data-with-change:
        source_trigger: webhook
        target_job: FHIR-standard-Data-with-change
        condition_type: always
        enabled: true
      FHIR-standard-Data-with-change->Send-to-OpenHIM:
        source_job: FHIR-standard-Data-with-change
        target_job: Send-to-OpenHIM
        condition_type: on_job_success
"""


def test_what_lightning_exports_imports() -> None:
    (doc,) = from_lightning_yaml(LIGHTNING_EXPORT, new_id=new_ids())
    structure = doc.structure
    assert structure.name == "OpenHIE Workflow"
    assert list(structure.jobs) == ["FHIR-standard-Data-with-change", "Send-to-OpenHIM"]
    assert structure.jobs["FHIR-standard-Data-with-change"].credential == "me@example.org-DHIS2"
    edge = structure.edges["FHIR-standard-Data-with-change->Send-to-OpenHIM"]
    # As `openfn deploy` reads it: an edge without `enabled` is enabled.
    assert (edge.condition_type, edge.enabled) == ("on_job_success", True)
    assert structure.edges["webhook->FHIR-standard-Data-with-change"].source_trigger == "webhook"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (("workflows:\n  OpenHIE-Workflow:\n", "workflows: []\nx:\n"), "workflows"),
        (
            (
                "        adaptor: '@openfn/language-http@latest'\n        credential",
                "        adaptor: 7\n        credential",
            ),
            "workflows.OpenHIE-Workflow.jobs.FHIR-standard-Data-with-change.adaptor",
        ),
        (("type: webhook", "type: kafka"), "workflows.OpenHIE-Workflow.triggers.webhook.type"),
        (
            ("target_job: Send-to-OpenHIM", "target_job: Nowhere"),
            "workflows.OpenHIE-Workflow.edges.FHIR-standard-Data-with-change->Send-to-OpenHIM"
            ".target_job",
        ),
        (
            ("condition_type: on_job_success", "condition_type: never"),
            "workflows.OpenHIE-Workflow.edges.FHIR-standard-Data-with-change->Send-to-OpenHIM"
            ".condition_type",
        ),
        (
            ("condition_type: on_job_success", "condition_type: js_expression"),
            "workflows.OpenHIE-Workflow.edges.FHIR-standard-Data-with-change->Send-to-OpenHIM"
            ".condition_expression",
        ),
        (
            ("        enabled: true\n    edges", "        enabled: yes please\n    edges"),
            "workflows.OpenHIE-Workflow.triggers.webhook.enabled",
        ),
        (
            ("source_job: FHIR-standard-Data-with-change", "source_job: webhook"),
            "workflows.OpenHIE-Workflow.edges.FHIR-standard-Data-with-change->Send-to-OpenHIM"
            ".source_job",
        ),
    ],
)
def test_bad_input_names_the_field(change: tuple[str, str], field: str) -> None:
    old, new = change
    assert old in LIGHTNING_EXPORT
    with pytest.raises(DocumentError) as caught:
        from_lightning_yaml(LIGHTNING_EXPORT.replace(old, new, 1), new_id=new_ids())
    assert caught.value.details["field"] == field
    assert caught.value.message.startswith(field)


def test_cron_cursor_by_key_resolves_to_the_job_id() -> None:
    text = LIGHTNING_EXPORT.replace(
        "        type: webhook\n        enabled: true\n",
        "        type: cron\n        cron_expression: '0 * * * *'\n        enabled: false\n"
        "        cron_cursor_job: Send-to-OpenHIM\n",
    )
    (doc,) = from_lightning_yaml(text, new_id=new_ids())
    trigger = doc.structure.triggers["webhook"]
    assert trigger.cron_cursor_job_id == doc.structure.jobs["Send-to-OpenHIM"].id
    with pytest.raises(DocumentError) as caught:
        from_lightning_yaml(
            text.replace("cron_cursor_job: Send", "cron_cursor_job: X"), new_id=new_ids()
        )
    assert caught.value.details["field"].endswith("triggers.webhook.cron_cursor_job")


def test_invalid_keys_get_planwright_keys_and_edges_follow() -> None:
    text = LIGHTNING_EXPORT.replace("Send-to-OpenHIM", "Send-to-OpenHIM's-SHR")
    (doc,) = from_lightning_yaml(text, new_id=new_ids())
    # An invalid key gives way to one derived from the step's name; its edges follow.
    assert list(doc.structure.jobs) == ["FHIR-standard-Data-with-change", "send-to-openhim"]
    assert "FHIR-standard-Data-with-change->send-to-openhim" in doc.structure.edges
