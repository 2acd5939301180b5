"""Importing a CLI workflow.json: the forms the CLI loads, read as the runtime reads them."""

from __future__ import annotations

import json

import pytest

from tests.tools.openfn.helpers import BRANCHING, new_ids
from tools.document import WorkflowDocument
from tools.document.openfn import from_cli_json, guess_format, to_cli_workflow
from tools.errors import DocumentError


def _load(data: object) -> WorkflowDocument:
    return from_cli_json(json.dumps(data), new_id=new_ids())


def test_export_imports_back_to_the_same_export() -> None:
    exported = to_cli_workflow(WorkflowDocument.from_yaml(BRANCHING))
    back = _load(exported)
    assert to_cli_workflow(back) == exported
    assert back.structure.jobs["check-coverage"].credential == "epic-sandbox"
    assert back.structure.triggers["webhook"].webhook_reply == "after_completion"


def test_execution_plan_form_and_runtime_edge_forms() -> None:
    doc = _load(
        {
            "workflow": {
                "name": "Plan",
                "steps": [
                    {
                        "id": "a",
                        "adaptor": "@openfn/language-common@1.0.0",
                        "expression": "x()",
                        "next": "b",
                    },
                    {
                        "id": "b",
                        "adaptors": ["@openfn/language-http@latest"],
                        "next": {
                            "c": True,
                            "d": "on_upstream_fail",
                            "e": False,
                            "f": {"label": "never"},
                            "g": {"condition": "state.ok"},
                        },
                    },
                    *({"id": k, "adaptors": ["@openfn/language-common@latest"]} for k in "cdefg"),
                ],
            },
            "options": {"start": "a"},
        }
    )
    edges = {
        e.key: (e.condition_type, e.condition_expression, e.enabled)
        for e in doc.structure.edges.values()
    }
    assert edges == {
        "a->b": ("always", None, True),
        "b->c": ("always", None, True),
        "b->d": ("on_job_failure", None, True),
        "b->e": ("always", None, False),
        "b->f": ("always", None, False),
        "b->g": ("js_expression", "state.ok", True),
    }
    assert doc.structure.name == "Plan"
    assert doc.structure.jobs["a"].name == "a"
    assert doc.structure.jobs["b"].body is None


@pytest.mark.parametrize(
    ("step", "field"),
    [
        ({"id": "a", "adaptors": ["x", "y"]}, "steps[0].adaptors"),
        ({"id": "a", "adaptor": "x", "expression": "./job.js"}, "steps[0].expression"),
        ({"id": "a", "adaptor": "x", "configuration": {"password": "s"}}, "steps[0].configuration"),
        ({"id": "a", "adaptor": "x", "configuration": "tmp/creds.json"}, "steps[0].configuration"),
        ({"id": "a", "adaptor": "x", "next": {"zz": True}}, "steps[0].next.zz"),
        ({"id": "a", "adaptor": "x", "next": {"a": {"condition": 3}}}, "steps[0].next.a.condition"),
        ({"id": "a", "adaptor": 7}, "steps[0].adaptor"),
    ],
)
def test_bad_steps_name_the_field(step: dict, field: str) -> None:
    with pytest.raises(DocumentError) as caught:
        _load({"steps": [step]})
    assert caught.value.details["field"] == field


def test_not_a_workflow() -> None:
    for data, field in [([], "workflow"), ({"steps": []}, "steps"), ({"jobs": {}}, "steps")]:
        with pytest.raises(DocumentError) as caught:
            _load(data)
        assert caught.value.details["field"] == field
    with pytest.raises(DocumentError) as caught:
        from_cli_json("[" * 100 + "]" * 100, new_id=new_ids())
    assert caught.value.code == "yaml_too_deep"
    with pytest.raises(DocumentError) as caught:
        _load({"start": "nope", "steps": [{"id": "a", "adaptor": "x"}]})
    assert caught.value.details["field"] == "start"


def test_guess_format() -> None:
    assert guess_format('{"steps": []}') == "cli"
    assert guess_format("", "flow/workflow.json") == "cli"
    assert guess_format("name: x\nworkflows:\n  a: {}\n") == "lightning"
    assert guess_format("name: x\n", "project.yaml") == "lightning"
    assert guess_format("name: x\njobs: {}\n", "doc.yaml") == "yaml"


def test_a_repeated_given_id_names_the_field() -> None:
    steps = [
        {"id": "a", "adaptor": "x", "openfn": {"uuid": "u-1"}, "next": {"b": True}},
        {"id": "b", "adaptor": "x", "openfn": {"uuid": "u-1"}},
    ]
    with pytest.raises(DocumentError) as caught:
        _load({"steps": steps})
    assert caught.value.details["field"] == "steps[1].id"
    steps[1]["openfn"] = {"uuid": "u-2"}
    doc = _load({"steps": steps})
    assert [j.id for j in doc.structure.jobs.values()] == ["u-1", "u-2"]
