"""A document over the job or edge limit is refused (413) before any per-job work:
before it is parsed, before an id is minted, on every route that takes one."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api import projects, workflows
from tests.app.service.helpers import EDITOR, auth, create_workflow
from tools.document import WorkflowDocument

JOBS = 10_000


def _yaml(jobs: int = JOBS) -> str:
    lines = ["name: Big", "jobs:"]
    for i in range(jobs):
        lines += [
            f"  job-{i}:",
            f"    name: Job {i}",
            "    adaptor: '@openfn/language-common@latest'",
        ]
    return "\n".join(lines) + "\n"


def _project(jobs: int = JOBS, edges: int = 0) -> str:
    """A Lightning project.yaml with one workflow of ``jobs`` jobs, the first ``edges``
    of them chained."""
    lines = ["name: P", "workflows:", "  big:", "    name: Big", "    jobs:"]
    for i in range(jobs):
        lines += [f"      job-{i}:", f"        name: Job {i}"]
        lines.append("        adaptor: '@openfn/language-common@latest'")
    if edges:
        lines.append("    edges:")
        for i in range(edges):
            lines += [f"      job-{i}->job-{i + 1}:", f"        source_job: job-{i}"]
            lines.append(f"        target_job: job-{i + 1}")
    return "\n".join(lines) + "\n"


def _cli(jobs: int = JOBS) -> str:
    steps = [
        {"id": f"s{i}", "adaptors": ["@openfn/language-common@latest"], "expression": "x"}
        for i in range(jobs)
    ]
    return json.dumps({"workflow": {"steps": steps}})


def _refuse_parsing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every parser and importer the routes call record the call and fail."""
    calls: list[str] = []

    def refusing(name: str) -> Callable[..., Any]:
        def called(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} was called for a document over the limit")

        return called

    monkeypatch.setattr(WorkflowDocument, "from_yaml", classmethod(refusing("from_yaml")))
    monkeypatch.setattr(workflows, "import_workflows", refusing("import_workflows"))
    monkeypatch.setattr(workflows, "import_project", refusing("import_project"))
    monkeypatch.setattr(workflows, "mint_missing_ids", refusing("mint_missing_ids"))
    monkeypatch.setattr(projects, "import_project", refusing("projects.import_project"))
    return calls


def test_ten_thousand_jobs_are_refused_before_any_parsing(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    workflow_id = create_workflow(client)["id"]
    big = _yaml()
    assert len(big.encode()) < client.app.state.services.settings.max_yaml_bytes  # type: ignore[attr-defined]
    calls = _refuse_parsing(monkeypatch)
    requests = {
        "create": ("POST", "/v1/workflows", {"yaml": big}),
        "put": ("PUT", f"/v1/workflows/{workflow_id}", {"yaml": big, "expected_version": 1}),
        "import yaml": ("POST", "/v1/workflows/import", {"format": "yaml", "content": big}),
        "import lightning": (
            "POST",
            "/v1/workflows/import",
            {"format": "lightning", "content": _project()},
        ),
        "import cli": ("POST", "/v1/workflows/import", {"format": "cli", "content": _cli()}),
        "project": ("POST", "/v1/projects", {"yaml": _project()}),
    }
    for what, (method, path, body) in requests.items():
        response = client.request(method, path, json=body, headers=auth(EDITOR))
        assert response.status_code == 413, (what, response.text)
        error = response.json()["error"]
        assert error["code"] == "too_many_jobs", (what, error)
        assert f"{JOBS} jobs" in error["message"]
    assert calls == []


def test_the_limits_are_settings(app_client: Callable[..., TestClient]) -> None:
    client = app_client(max_jobs=3, max_edges=1)
    assert (
        client.post("/v1/workflows", json={"yaml": _yaml(3)}, headers=auth(EDITOR)).status_code
        == 201
    )
    four = client.post("/v1/workflows", json={"yaml": _yaml(4)}, headers=auth(EDITOR))
    assert (four.status_code, four.json()["error"]["code"]) == (413, "too_many_jobs")
    # Flow style is not counted from the text, but the parsed document is, before ids.
    flow = (
        "name: F\njobs: {"
        + ", ".join(
            f"j{i}: {{name: J{i}, adaptor: '@openfn/language-common@latest'}}" for i in range(4)
        )
        + "}\n"
    )
    refused = client.post("/v1/workflows", json={"yaml": flow}, headers=auth(EDITOR))
    assert (refused.status_code, refused.json()["error"]["code"]) == (413, "too_many_jobs")
    edges = client.post("/v1/projects", json={"yaml": _project(3, 2)}, headers=auth(EDITOR))
    assert edges.status_code == 413, edges.text
    assert edges.json()["error"]["code"] == "too_many_edges"
    one = client.post("/v1/projects", json={"yaml": _project(3, 1)}, headers=auth(EDITOR))
    assert one.status_code == 201, one.text


def test_flow_style_imports_are_counted_before_the_importer_runs(
    app_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flow-style sections are not counted from the lines; they are counted on the plain
    parsed data, still before any importer builds a document or mints an id."""
    client = app_client(max_jobs=3)
    jobs = ", ".join(f"j{i}: {{name: J{i}}}" for i in range(4))
    project = f"name: P\nworkflows:\n  w:\n    name: W\n    jobs: {{{jobs}}}\n"
    workflow = f"name: W\njobs: {{{jobs}}}\n"
    calls = _refuse_parsing(monkeypatch)
    for fmt, content in (("lightning", project), ("yaml", workflow)):
        refused = client.post(
            "/v1/workflows/import", json={"format": fmt, "content": content}, headers=auth(EDITOR)
        )
        assert (refused.status_code, refused.json()["error"]["code"]) == (413, "too_many_jobs")
    created = client.post("/v1/projects", json={"yaml": project}, headers=auth(EDITOR))
    assert (created.status_code, created.json()["error"]["code"]) == (413, "too_many_jobs")
    assert calls == []
