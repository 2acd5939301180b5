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

from tests.external.helpers import (
    DAILY_DIGEST_CRON,
    KEYS_DIFFER_FROM_NAMES,
    REFERRAL_INTAKE,
    documents_under_test,
)
from tests.external.openfn_harness import (
    expected_from_document,
    load_with_openfn,
    wrap_as_lightning_project,
)

pytestmark = pytest.mark.external


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
