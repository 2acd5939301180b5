"""The published JSON Schema is generated from the models and kept in the repo."""

from __future__ import annotations

import json

import jsonschema
import pytest
from ruamel.yaml import YAML

from app.cli import main
from tools.document import WorkflowDocument
from tools.document.schema import SCHEMA_PATH, render_json_schema
from tools.registry import run_tool


def test_committed_schema_is_current() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_json_schema(), (
        "tools/document/data/schema is stale: run `planwright schema --write`"
    )


def test_schema_check_command_detects_staleness(
    monkeypatch: pytest.MonkeyPatch, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "workflow.v1.json"
    stale.write_text("{}", encoding="utf-8")
    monkeypatch.setattr("app.cli.SCHEMA_PATH", stale)
    assert main(["schema", "--check"]) == 1
    assert main(["schema", "--write"]) == 0
    assert main(["schema", "--check"]) == 0
    assert stale.read_text(encoding="utf-8") == render_json_schema()


def _as_json(yaml_text: str) -> object:
    return json.loads(json.dumps(YAML(typ="safe").load(yaml_text)))


def test_tool_built_documents_validate_against_the_schema() -> None:
    doc = WorkflowDocument.new()
    result = run_tool(
        doc,
        "create_workflow",
        {
            "name": "Daily digest",
            "jobs": [
                {"name": "Fetch cases", "adaptor": "commcare"},
                {"name": "Send digest", "adaptor": "gmail"},
            ],
            "edges": [{"source": "fetch-cases", "target": "send-digest"}],
            "trigger": {"type": "cron", "cron_expression": "0 9 * * *"},
        },
    )
    assert result.ok, result.text
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.validate(_as_json(doc.to_yaml()), schema)


def test_schema_rejects_wrong_types() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    bad = {"name": "x", "jobs": {"a": {"name": 5, "adaptor": "@openfn/language-http@latest"}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
