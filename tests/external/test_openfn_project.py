"""External check: our workflow documents load with OpenFn's own ``@openfn/project``.

Each document is wrapped as a Lightning project.yaml, loaded by the pinned npm
package (``openfn_project/package.json``) through ``check.mjs``, and the steps,
``next`` edges and conditions it builds are compared with our own reading of
the document (``expected_from_document``). To check more documents, add
``(id, yaml_text)`` pairs to ``DOCUMENTS`` (or extend ``documents_under_test``).

Needs node and npm: when they are missing the session fixture fails (it never
skips), because CI has both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.external.openfn_harness import (
    expected_from_document,
    load_with_openfn,
    wrap_as_lightning_project,
)

pytestmark = pytest.mark.external

REFERRAL_INTAKE = """\
name: Referral intake
jobs:
  check-coverage:                       # job key: stable, referenced by edges
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a2222
    name: Check coverage                # display name
    adaptor: '@openfn/language-fhir@latest'
    body: |
      get('Coverage', { query: { patient: $.patientId } });
    x-reviewed-by: planwright           # unknown field: must survive
  notify:
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a3333
    name: Notify
    adaptor: '@openfn/language-http@latest'
    body: "// Add operations here"
  log-failure:
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a5555
    name: Log failure
    adaptor: '@openfn/language-common@latest'
    body: |
      fn(state => { console.log(state.errors); return state; });
  archive:
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a6666
    name: Archive
    adaptor: '@openfn/language-common@1.14.0'
    body: |
      fn(state => state);
triggers:
  webhook:
    id: 0a9b8c7d-6e5f-4d3c-2b1a-0c3f8f0a4444
    type: webhook
    enabled: false
edges:
  webhook->check-coverage:
    id: 11111111-2222-4333-8444-555555555555
    source_trigger: webhook             # exactly one of source_trigger / source_job
    target_job: check-coverage
    condition_type: always
    enabled: true
  check-coverage->notify:
    id: 11111111-2222-4333-8444-555555555556
    source_job: check-coverage
    target_job: notify
    condition_type: js_expression
    condition_expression: "!state.errors"
    condition_label: no errors
    enabled: true
  check-coverage->log-failure:
    id: 11111111-2222-4333-8444-555555555557
    source_job: check-coverage
    target_job: log-failure
    condition_type: on_job_failure
    enabled: true
  notify->archive:
    id: 11111111-2222-4333-8444-555555555558
    source_job: notify
    target_job: archive
    condition_type: on_job_success
    enabled: false
"""

DAILY_DIGEST_CRON = """\
name: Daily digest
jobs:
  fetch-referrals:
    id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e01
    name: Fetch referrals
    adaptor: '@openfn/language-http@latest'
    body: |
      get('/referrals', { query: { since: $.lastRunAt } });
  send-digest:
    id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e02
    name: Send digest
    adaptor: '@openfn/language-mailgun@latest'
    body: "// Add operations here"
triggers:
  cron:
    id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e03
    type: cron
    enabled: false
    cron_expression: "0 7 * * 1-5"
    cron_cursor_job_id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e01
edges:
  cron->fetch-referrals:
    id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e04
    source_trigger: cron
    target_job: fetch-referrals
    condition_type: always
    enabled: true
  fetch-referrals->send-digest:
    id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e05
    source_job: fetch-referrals
    target_job: send-digest
    condition_type: on_job_success
    enabled: true
"""

# Job keys that are not the slug of the display name: @openfn/project names
# steps after slugify(name), so edges must still land on the right steps.
KEYS_DIFFER_FROM_NAMES = """\
name: Keys differ from names
jobs:
  step_1:
    id: 9a8b7c6d-1111-4222-8333-944444444401
    name: Validate Payload (v2)
    adaptor: '@openfn/language-common@latest'
    body: "fn(state => state);"
  step_2:
    id: 9a8b7c6d-1111-4222-8333-944444444402
    name: Upsert patient
    adaptor: '@openfn/language-fhir@latest'
    body: "fn(state => state);"
triggers:
  inbound:
    id: 9a8b7c6d-1111-4222-8333-944444444403
    type: webhook
    enabled: true
edges:
  inbound->step_1:
    id: 9a8b7c6d-1111-4222-8333-944444444404
    source_trigger: inbound
    target_job: step_1
    condition_type: always
    enabled: true
  step_1->step_2:
    id: 9a8b7c6d-1111-4222-8333-944444444405
    source_job: step_1
    target_job: step_2
    condition_type: js_expression
    condition_expression: |
      state.data.resourceType === 'Patient'
    enabled: true
"""

DOCUMENTS: list[tuple[str, str]] = [
    ("referral-intake", REFERRAL_INTAKE),
    ("daily-digest-cron", DAILY_DIGEST_CRON),
    ("keys-differ-from-names", KEYS_DIFFER_FROM_NAMES),
]


def _built_by_tools() -> list[tuple[str, str]]:
    """Documents produced by Planwright's own edit tools, the ones users really get."""
    from tests.tools.helpers import build, make_context

    sop = build(
        [
            (
                "create_workflow",
                {
                    "name": "Referral intake SOP",
                    "jobs": [
                        {"name": "Pull referral", "adaptor": "http"},
                        {"name": "Check insurance", "adaptor": "fhir"},
                        {"name": "Request prior auth", "adaptor": "http"},
                        {"name": "Schedule visit", "adaptor": "fhir"},
                        {"name": "Alert coordinator", "adaptor": "gmail"},
                    ],
                    "edges": [
                        {"source": "pull-referral", "target": "check-insurance"},
                        {
                            "source": "check-insurance",
                            "target": "request-prior-auth",
                            "condition_expression": "state.data.plan === 'BlueCross HMO'",
                            "condition_label": "BlueCross HMO",
                        },
                        {
                            "source": "check-insurance",
                            "target": "schedule-visit",
                            "condition_expression": "state.data.plan !== 'BlueCross HMO'",
                        },
                        {
                            "source": "check-insurance",
                            "target": "alert-coordinator",
                            "condition_type": "on_job_failure",
                        },
                    ],
                    "trigger": {"type": "webhook"},
                },
            ),
            ("update_jobs", {"jobs": [{"key": "schedule-visit", "new_key": "book-visit"}]}),
            ("add_jobs", {"jobs": [{"name": "Dedupe referral", "adaptor": "common"}]}),
            ("remove_edges", {"edges": [{"source": "pull-referral", "target": "check-insurance"}]}),
            (
                "add_edges",
                {
                    "edges": [
                        {"source": "pull-referral", "target": "dedupe-referral"},
                        {"source": "dedupe-referral", "target": "check-insurance"},
                    ]
                },
            ),
            ("set_trigger", {"type": "cron", "cron_expression": "30 7 * * 1-5", "enabled": True}),
        ],
        make_context(),
    )
    return [("tools-built-sop", sop.to_yaml())]


def documents_under_test() -> list[tuple[str, str]]:
    """``(id, yaml_text)`` pairs checked against @openfn/project; extend freely."""
    return [*DOCUMENTS, *_built_by_tools()]


def _load_single(doc_id: str, yaml_text: str, cache: Path) -> dict[str, Any]:
    loaded = load_with_openfn(wrap_as_lightning_project({doc_id: yaml_text}), cache)
    assert len(loaded["workflows"]) == 1, loaded
    workflow: dict[str, Any] = loaded["workflows"][0]
    return workflow


def _ids(workflow: dict[str, Any]) -> list[str]:
    return [step["id"] for step in workflow["steps"]]


@pytest.mark.parametrize(
    ("doc_id", "yaml_text"), documents_under_test(), ids=[d for d, _ in documents_under_test()]
)
def test_document_loads_and_matches(doc_id: str, yaml_text: str, openfn_cache: Path) -> None:
    workflow = _load_single(doc_id, yaml_text, openfn_cache)
    ids = _ids(workflow)
    assert len(ids) == len(set(ids)), (
        f"@openfn/project gave two steps the same id {ids}: job ids are slugify(name) and "
        "trigger ids are the trigger type, so these must be unique"
    )
    assert workflow == expected_from_document(yaml_text, key=doc_id)


def test_documents_load_together_as_one_project(openfn_cache: Path) -> None:
    documents = documents_under_test()
    loaded = load_with_openfn(wrap_as_lightning_project(dict(documents)), openfn_cache)
    assert loaded["project"] == {
        "id": "planwright-external-check",
        "name": "planwright-external-check",
    }
    assert loaded["workflows"] == [expected_from_document(text, key=key) for key, text in documents]


def test_referral_intake_literal_mapping(openfn_cache: Path) -> None:
    """Pins the package's mapping by hand, independently of expected_from_document."""
    workflow = _load_single("referral-intake", REFERRAL_INTAKE, openfn_cache)
    assert (workflow["id"], workflow["name"], workflow["start"]) == (
        "referral-intake",
        "Referral intake",
        "webhook",
    )
    steps = {step["id"]: step for step in workflow["steps"]}
    assert list(steps) == ["webhook", "check-coverage", "notify", "log-failure", "archive"]

    webhook = steps["webhook"]
    assert (webhook["kind"], webhook["type"], webhook["enabled"]) == ("trigger", "webhook", False)
    assert webhook["extra"] == {}  # the trigger's UUID is not kept
    assert webhook["next"] == {
        "check-coverage": {"condition": "always", "disabled": False, "label": None}
    }

    check = steps["check-coverage"]
    assert check["name"] == "Check coverage"
    assert check["adaptor"] == "@openfn/language-fhir@latest"
    assert check["expression"] == "get('Coverage', { query: { patient: $.patientId } });\n"
    assert check["extra"] == {"x-reviewed-by": "planwright"}  # unknown field kept, UUID dropped
    assert check["next"] == {
        "notify": {"condition": "!state.errors", "disabled": False, "label": "no errors"},
        "log-failure": {"condition": "on_job_failure", "disabled": False, "label": None},
    }
    assert steps["notify"]["next"] == {
        "archive": {"condition": "on_job_success", "disabled": True, "label": None}
    }
    assert steps["log-failure"]["next"] == {}
    assert steps["archive"]["next"] == {}


def test_cron_trigger_mapping(openfn_cache: Path) -> None:
    workflow = _load_single("daily-digest-cron", DAILY_DIGEST_CRON, openfn_cache)
    cron = workflow["steps"][0]
    assert workflow["start"] == "cron"
    assert cron["id"] == "cron"
    assert (cron["type"], cron["enabled"], cron["cron_expression"]) == (
        "cron",
        False,
        "0 7 * * 1-5",
    )
    # Passed through verbatim: it still holds our job UUID, which the loaded
    # project no longer has anywhere (steps are keyed by slugified name).
    assert cron["extra"] == {"cron_cursor_job_id": "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e01"}


def test_steps_are_named_after_display_names_not_keys(openfn_cache: Path) -> None:
    workflow = _load_single("keys-differ-from-names", KEYS_DIFFER_FROM_NAMES, openfn_cache)
    assert _ids(workflow) == ["webhook", "validate-payload-v2", "upsert-patient"]
    steps = {step["id"]: step for step in workflow["steps"]}
    assert list(steps["webhook"]["next"]) == ["validate-payload-v2"]
    assert steps["validate-payload-v2"]["next"] == {
        "upsert-patient": {
            "condition": "state.data.resourceType === 'Patient'\n",
            "disabled": False,
            "label": None,
        }
    }


def test_document_without_edges_loads(openfn_cache: Path) -> None:
    """A draft with no trigger and no edges still goes through the project.yaml parser."""
    draft = (
        "name: Draft\n"
        "jobs:\n"
        "  only-job:\n"
        "    id: 5e6f7a8b-0000-4000-8000-000000000001\n"
        "    name: Only job\n"
        "    adaptor: '@openfn/language-common@latest'\n"
        "    body: '// Add operations here'\n"
    )
    workflow = _load_single("draft", draft, openfn_cache)
    assert workflow == expected_from_document(draft, key="draft")
    assert workflow["start"] is None
    assert _ids(workflow) == ["only-job"]


@pytest.mark.parametrize(
    ("doc_id", "yaml_text"), documents_under_test(), ids=[d for d, _ in documents_under_test()]
)
def test_edges_state_enabled_explicitly(doc_id: str, yaml_text: str) -> None:
    """@openfn/project reads an edge without ``enabled`` as disabled; never leave it out."""
    edges = YAML(typ="safe", pure=True).load(yaml_text).get("edges") or {}
    missing = [key for key, edge in edges.items() if not isinstance(edge.get("enabled"), bool)]
    assert not missing, f"{doc_id}: edges without a boolean `enabled`: {missing}"


def test_wrapper_nests_documents_unchanged() -> None:
    documents = dict(documents_under_test())
    project = YAML(typ="safe", pure=True).load(wrap_as_lightning_project(documents))
    assert project["name"] == "planwright-external-check"
    assert project["credentials"] == {}
    assert list(project["workflows"]) == list(documents)
    for key, text in documents.items():
        assert project["workflows"][key] == YAML(typ="safe", pure=True).load(text)
