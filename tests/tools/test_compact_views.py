"""What every request carries, kept short without losing a fact: the structure chart
writes runs of plain edges as chains, tool schemas write optional fields as their
type, the adaptor list names bare adaptors together."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from agents.runtime import TurnRuntime, _says_only_its_name
from tests.agents.helpers import TURN_TIME
from tools.document import WorkflowDocument
from tools.document.redaction import (
    CHAINED_HEADING,
    EDGES_HEADING,
    STEPS_HEADING,
    render_structure,
)
from tools.registry import run_tool
from tools.schema import input_schema

CHAIN = """name: Chain
jobs:
  a: {name: A, adaptor: '@openfn/language-http@latest'}
  b: {name: B, adaptor: '@openfn/language-http@latest'}
  c: {name: C, adaptor: '@openfn/language-http@latest'}
  d: {name: D, adaptor: '@openfn/language-http@latest'}
  e: {name: E, adaptor: '@openfn/language-http@latest'}
triggers:
  webhook: {type: webhook, enabled: true}
edges:
  webhook->a: {source_trigger: webhook, target_job: a, condition_type: always, enabled: true}
  a->b: {source_job: a, target_job: b, condition_type: on_job_success, enabled: true}
  b->c: {source_job: b, target_job: c, condition_type: on_job_success, enabled: true}
  c->d: {source_job: c, target_job: d, condition_type: on_job_failure, enabled: true}
  d->e: {source_job: d, target_job: e, condition_type: on_job_success, enabled: true}
"""


def _lines(chart: str) -> list[str]:
    return chart.split("\n")


def test_plain_edges_in_sequence_are_one_chain_and_every_other_edge_its_own_line() -> None:
    doc = WorkflowDocument.from_yaml(CHAIN)
    lines = _lines(render_structure(doc.structure))
    assert CHAINED_HEADING in lines
    edges = lines[lines.index(CHAINED_HEADING) + 1 :]
    assert edges == [
        "- webhook -> a: always",
        "- a -> b -> c",  # two plain edges, one line
        "- c -> d: on_job_failure",  # a condition breaks the chain
        "- d -> e",
    ]


def test_without_a_chain_the_heading_is_the_plain_one() -> None:
    doc = WorkflowDocument.from_yaml(CHAIN)
    result = run_tool(doc, "remove_edges", {"edges": [{"source": "b", "target": "c"}]})
    assert result.ok, result.text
    chart = render_structure(doc.structure)
    assert EDGES_HEADING in _lines(chart) and CHAINED_HEADING not in chart
    assert "- a -> b" in _lines(chart)


class _Args(BaseModel):
    """Docstring that the tool's own description already says."""

    name: str
    label: str | None = None
    count: int | None = 3  # a non-null default keeps its full form


def test_optional_fields_are_written_as_their_type_and_left_out_of_required() -> None:
    schema: dict[str, Any] = input_schema(_Args)
    assert "description" not in schema  # the tool's description says it once
    assert schema["required"] == ["name"]
    assert schema["properties"]["label"] == {"type": "string"}
    assert "anyOf" in schema["properties"]["count"]  # default 3: not rewritten
    assert _Args.model_validate({"name": "x"}).label is None  # omission still means None


class _Nested(BaseModel):
    """A docstring every tool that nests this model would repeat."""

    key: str


class _Holder(BaseModel):
    one: _Nested = Field(description="The one the field is about.")
    many: list[_Nested]


def test_a_nested_models_docstring_is_left_out_and_the_fields_description_kept() -> None:
    schema: dict[str, Any] = input_schema(_Holder)
    assert "docstring" not in json.dumps(schema)
    assert schema["properties"]["one"]["description"] == "The one the field is about."
    assert schema["properties"]["one"]["properties"] == {"key": {"type": "string"}}
    assert schema["properties"]["many"]["items"]["required"] == ["key"]


def test_adaptors_whose_description_is_only_their_name_are_named_together() -> None:
    assert _says_only_its_name("azure-storage", "OpenFn adaptor for Azure Storage.")
    assert _says_only_its_name("mpesa", "")
    assert not _says_only_its_name("cht", "OpenFn adaptor for Community Health Toolkit (CHT).")
    assert not _says_only_its_name("http", "Makes HTTP requests.")
    listing = TurnRuntime(models={}, clock=lambda: TURN_TIME).adaptor_list
    lines = listing.split("\n")
    assert "- http: " in listing and lines[-1].startswith("- also, without a description here:")
    assert "azure-storage" in lines[-1] and "Azure Storage" not in listing
    assert any(line.startswith("- cht: ") for line in lines)


def test_a_step_leaves_out_the_adaptor_of_the_step_above_it() -> None:
    doc = WorkflowDocument.from_yaml(
        CHAIN.replace(
            "c: {name: C, adaptor: '@openfn/language-http@latest'}",
            "c: {name: C, adaptor: '@openfn/language-fhir@latest'}",
        )
    )
    lines = _lines(render_structure(doc.structure))
    assert STEPS_HEADING in lines
    steps = lines[lines.index(STEPS_HEADING) + 1 : lines.index(STEPS_HEADING) + 6]
    assert steps == [
        "- a: 'A' [http] (no code)",
        "- b: 'B' (no code)",  # http, as above
        "- c: 'C' [fhir] (no code)",  # a change of adaptor is always shown
        "- d: 'D' [http] (no code)",
        "- e: 'E' (no code)",
    ]
