"""External check: a whole project, exported over REST as one ``project.yaml``
(``GET /v1/projects/{id}/export?format=lightning``), loads with ``@openfn/project``
with every workflow, step, edge and condition.

The project has four workflows: the three of ``REFERRAL_PROJECT`` (every
condition type, a labelled js condition, a disabled edge, a credential, webhook
and cron triggers), created with ``POST /v1/projects``, and a fourth added with
``POST /v1/workflows {project_id}``. What the package builds is compared with
the file we wrote (``expected_steps``) and with the file that went in; the
package's own rewrite of the project imports back as an equal project.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.documents import REFERRAL_PROJECT
from tests.external.helpers import CRON_WITH_CURSOR, expected_steps
from tests.external.openfn_harness import (
    load_with_openfn,
)
from tests.external.service_workflows import EDITOR, offline_service

pytestmark = pytest.mark.external

HEADERS = {"Authorization": f"Bearer {EDITOR}"}
KEYS = ["referral-intake", "document-verification", "status-transitions", "nightly-sync_v2"]


def _load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


def _edges(steps: list[dict[str, Any]]) -> set[tuple[str, str, str, bool]]:
    return {
        (step["id"], target, rule["condition"], rule["disabled"])
        for step in steps
        for target, rule in step["next"].items()
    }


def test_a_four_workflow_project_loads_with_the_package(openfn_cache: Path, tmp_path: Path) -> None:
    with offline_service(tmp_path) as client:
        created = client.post("/v1/projects", json={"yaml": REFERRAL_PROJECT}, headers=HEADERS)
        assert created.status_code == 201, created.text
        project_id = created.json()["id"]
        added = client.post(
            "/v1/workflows",
            json={"yaml": CRON_WITH_CURSOR, "project_id": project_id},
            headers=HEADERS,
        )
        assert added.status_code == 201, added.text
        exported = client.get(
            f"/v1/projects/{project_id}/export", params={"format": "lightning"}, headers=HEADERS
        )
        assert exported.status_code == 200, exported.text
        ours = _load(exported.text)
        loaded = load_with_openfn(exported.text, openfn_cache, spec=True)

        # Every workflow, in project order, under the id the package derives.
        assert list(ours["workflows"]) == KEYS
        assert [wf["id"] for wf in loaded["workflows"]] == KEYS
        assert [wf["name"] for wf in loaded["workflows"]] == [
            wf["name"] for wf in ours["workflows"].values()
        ]
        # Every step, edge and condition, as the file says.
        for built, workflow in zip(loaded["workflows"], ours["workflows"].values(), strict=True):
            assert built["steps"] == expected_steps(workflow)
            assert built["start"] == next(iter(workflow["triggers"]))

        # And as the file that went in says (independent of our exporter).
        original = _load(REFERRAL_PROJECT)["workflows"]
        by_id = {wf["id"]: wf for wf in loaded["workflows"]}
        for key, workflow in original.items():
            steps = by_id[key]["steps"]
            assert {s["id"] for s in steps} == set(workflow["jobs"]) | set(workflow["triggers"])
            expected_edges = {
                (
                    edge.get("source_job") or edge["source_trigger"],
                    edge["target_job"],
                    edge.get("condition_expression", edge["condition_type"]),
                    not edge["enabled"],
                )
                for edge in workflow["edges"].values()
            }
            assert _edges(steps) == expected_edges
        verify = next(
            s for s in by_id["document-verification"]["steps"] if s["id"] == "verify-documents"
        )
        assert verify["next"]["hand-off"]["label"] == "verified"
        fetch = next(s for s in by_id["referral-intake"]["steps"] if s["id"] == "fetch-referral")
        assert fetch["extra"] == {"configuration": "clinic-api"}

        # The package's own project.yaml comes back in as an equal project.
        again = client.post("/v1/projects", json={"yaml": loaded["spec_yaml"]}, headers=HEADERS)
        assert again.status_code == 201, again.text
        assert len(again.json()["workflows"]) == 4
        re_exported = client.get(f"/v1/projects/{again.json()['id']}/export", headers=HEADERS)
        assert re_exported.status_code == 200, re_exported.text
        reloaded = load_with_openfn(re_exported.text, openfn_cache)
        # The package writes jobs sorted by name: compare steps by id.
        assert [{s["id"]: s for s in wf["steps"]} for wf in reloaded["workflows"]] == [
            {s["id"]: s for s in wf["steps"]} for wf in loaded["workflows"]
        ]
