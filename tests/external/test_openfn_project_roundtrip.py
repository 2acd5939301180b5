"""External check: our Lightning ``project.yaml`` export round-trips through ``@openfn/project``.

For every document: ``to_lightning_yaml`` -> the pinned package loads it
(``Project.from('path')``) -> we compare the steps, ``next`` edges, conditions
and ids it built with the file we wrote -> the package writes the project back
(``project.serialize('spec')``) -> that file has the same workflow, job,
trigger and edge keys and contents as ours -> importing the package's file with
``from_lightning_yaml`` gives back the same workflow (same export, same CLI
workflow.json). Needs node and npm (the session fixture fails without them).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.external.helpers import CRON_WITH_CURSOR, documents_under_test, expected_steps
from tests.external.openfn_harness import (
    load_with_openfn,
)
from tests.external.service_workflows import EDITOR, offline_service
from tests.tools.openfn.helpers import BRANCHING
from tools.document import WorkflowDocument
from tools.document.openfn import (
    from_lightning_yaml,
    to_cli_workflow,
    to_lightning_project,
    to_lightning_yaml,
)

pytestmark = pytest.mark.external


def documents() -> list[tuple[str, str]]:
    return [
        *documents_under_test(),
        (
            "branching-credential-webhook",
            BRANCHING.replace("name: Referral intake", "name: Branching"),
        ),
        ("cron-with-cursor", CRON_WITH_CURSOR),
    ]


def _new_ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"22222222-0000-4000-8000-{next(counter):012d}"


def _without_state(spec: dict[str, Any]) -> dict[str, Any]:
    """The package's written project minus what only Lightning's state holds."""
    workflows = {
        key: {k: v for k, v in wf.items() if k != "lock_version"}
        for key, wf in spec["workflows"].items()
    }
    return {"name": spec["name"], "workflows": workflows}


def _package_project(spec_yaml: str) -> dict[str, Any]:
    """The project fields of the package's file (an import keeps them all)."""
    spec: dict[str, Any] = YAML(typ="safe", pure=True).load(spec_yaml)
    return spec


def _by_id(workflow: dict[str, Any]) -> dict[str, Any]:
    return {**workflow, "steps": {step["id"]: step for step in workflow["steps"]}}


@pytest.mark.parametrize(("doc_id", "yaml_text"), documents(), ids=[d for d, _ in documents()])
def test_export_round_trips_through_the_package(
    doc_id: str, yaml_text: str, openfn_cache: Path
) -> None:
    doc = WorkflowDocument.from_yaml(yaml_text)
    ours = to_lightning_project([doc])
    ((key, workflow),) = ours["workflows"].items()
    loaded = load_with_openfn(to_lightning_yaml([doc]), openfn_cache, spec=True)

    # 1. What the package built: the same ids (= our keys), steps, edges, conditions.
    (built,) = loaded["workflows"]
    assert (built["id"], built["name"]) == (key, workflow.get("name"))
    assert built["start"] == next(iter(workflow["triggers"]), None)
    assert built["steps"] == expected_steps(workflow)

    # 2. What the package writes back: the same keys and contents.
    spec = YAML(typ="safe", pure=True).load(loaded["spec_yaml"])
    assert _without_state(spec) == {"name": ours["name"], "workflows": ours["workflows"]}
    written = spec["workflows"][key]
    for section in ("jobs", "triggers", "edges"):
        assert sorted(written[section]) == sorted(workflow[section]), section

    # 3. Importing the package's file gives back the same workflow, and keeps the
    # project fields the package added (its `id`, `collections`) as it keeps any.
    (back,) = from_lightning_yaml(loaded["spec_yaml"], new_id=_new_ids())
    added = {k: v for k, v in _package_project(loaded["spec_yaml"]).items() if k not in ours}
    assert to_lightning_project([back]) == {**ours, **added}
    # The package writes jobs sorted by name, so only the order of steps may differ.
    assert _by_id(to_cli_workflow(back)) == _by_id(to_cli_workflow(doc))


def test_all_documents_as_one_project(openfn_cache: Path) -> None:
    docs = [WorkflowDocument.from_yaml(text) for _, text in documents()]
    ours = to_lightning_project(docs, project_name="Planwright export")
    loaded = load_with_openfn(
        to_lightning_yaml(docs, project_name="Planwright export"), openfn_cache, spec=True
    )
    assert [wf["id"] for wf in loaded["workflows"]] == list(ours["workflows"])
    assert [wf["steps"] for wf in loaded["workflows"]] == [
        expected_steps(wf) for wf in ours["workflows"].values()
    ]
    imported = from_lightning_yaml(loaded["spec_yaml"], new_id=_new_ids())
    assert len(imported) == len(docs)
    added = {k: v for k, v in _package_project(loaded["spec_yaml"]).items() if k not in ours}
    assert to_lightning_project(imported, project_name="Planwright export") == {**ours, **added}


def test_a_key_rename_here_keeps_every_id_there(openfn_cache: Path) -> None:
    """tools-built-sop renamed schedule-visit to book-visit: OpenFn still sees schedule-visit."""
    (_, sop) = next(d for d in documents() if d[0] == "tools-built-sop")
    doc = WorkflowDocument.from_yaml(sop)
    assert "book-visit" in doc.structure.jobs
    (built,) = load_with_openfn(to_lightning_yaml([doc]), openfn_cache)["workflows"]
    ids = [step["id"] for step in built["steps"]]
    assert "schedule-visit" in ids and "book-visit" not in ids


def test_cli_export_matches_what_the_package_builds(openfn_cache: Path) -> None:
    """Our workflow.json and the package's reading of our project.yaml agree on ids,
    conditions and configuration (the CLI trims js conditions, nothing else differs)."""
    for _, text in documents():
        doc = WorkflowDocument.from_yaml(text)
        (built,) = load_with_openfn(to_lightning_yaml([doc]), openfn_cache)["workflows"]
        cli = to_cli_workflow(doc)
        assert cli["start"] == built["start"] or built["start"] is None
        assert [s["id"] for s in cli["steps"]] == [s["id"] for s in built["steps"]]
        for ours, theirs in zip(cli["steps"], built["steps"], strict=True):
            assert set(ours.get("next", {})) == set(theirs["next"])
            for target, rule in ours.get("next", {}).items():
                assert rule["condition"] == theirs["next"][target]["condition"].strip()
                assert rule["disabled"] == theirs["next"][target]["disabled"]
            if theirs["kind"] == "job":
                assert ours["expression"] == theirs["expression"]
                assert ours.get("configuration") == theirs["extra"].get("configuration")
        json.dumps(cli)  # plain JSON all the way down


def test_through_the_service_rest_export_and_import(openfn_cache: Path, tmp_path: Path) -> None:
    """The same cycle over REST: export ?format=lightning, the package, import its file."""
    headers = {"Authorization": f"Bearer {EDITOR}"}
    with offline_service(tmp_path) as client:
        created = client.post("/v1/workflows", json={"yaml": CRON_WITH_CURSOR}, headers=headers)
        wid = created.json()["id"]
        exported = client.get(f"/v1/workflows/{wid}/export?format=lightning", headers=headers)
        assert exported.status_code == 200
        loaded = load_with_openfn(exported.text, openfn_cache, spec=True)
        ours = YAML(typ="safe", pure=True).load(exported.text)
        (workflow,) = ours["workflows"].values()
        assert loaded["workflows"][0]["steps"] == expected_steps(workflow)
        imported = client.post(
            "/v1/workflows/import",
            json={"format": "lightning", "content": loaded["spec_yaml"]},
            headers=headers,
        )
        assert imported.status_code == 201, imported.text
        (back,) = imported.json()["workflows"]
        cli = [
            client.get(f"/v1/workflows/{w}/export?format=cli", headers=headers).json()
            for w in (wid, back["id"])
        ]
        assert _by_id(cli[0]) == _by_id(cli[1])
