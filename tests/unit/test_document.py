"""WorkflowDocument: lossless round-trip, hostile input, redaction, pre-existing problems."""

from __future__ import annotations

import json

import pytest

from tests.unit.tool_helpers import (
    FIXTURE_EDGE_IDS,
    FIXTURE_FETCH_BODY,
    FIXTURE_JOB_IDS,
    FIXTURE_TRIGGER_ID,
    FIXTURE_YAML,
    STANDARD_BODY,
    edge,
    fails,
    fixture_doc,
    fresh,
    job,
    make_context,
    ok,
    yaml_block,
)
from tools.document import WorkflowDocument
from tools.errors import DocumentError
from tools.registry import document_problems


def load_error(text: str, **kwargs: int) -> DocumentError:
    with pytest.raises(DocumentError) as info:
        WorkflowDocument.from_yaml(text, **kwargs)
    return info.value


# =========================================================================== round trip


def test_fixture_round_trips_byte_identical() -> None:
    doc = fixture_doc()
    assert doc.to_yaml() == FIXTURE_YAML
    assert doc.copy().to_yaml() == FIXTURE_YAML
    assert fresh(doc).to_yaml() == FIXTURE_YAML


def test_fixture_structure() -> None:
    s = fixture_doc().structure
    assert s.name == "Referral intake"
    assert {k: j.id for k, j in s.jobs.items()} == FIXTURE_JOB_IDS
    assert s.jobs["fetch-referrals"].body == FIXTURE_FETCH_BODY
    assert s.jobs["fetch-referrals"].adaptor == "@openfn/language-http@6.5.1"
    assert s.triggers["webhook"].id == FIXTURE_TRIGGER_ID
    assert s.triggers["webhook"].custom_path == "referrals/intake"
    assert {k: e.id for k, e in s.edges.items()} == FIXTURE_EDGE_IDS
    assert s.edges["fetch-referrals->check-coverage"].condition_label == "Has referrals"


UNTOUCHED = [
    ("jobs", "fetch-referrals"),
    ("jobs", "check-coverage"),
    ("triggers", "webhook"),
    ("edges", "webhook->fetch-referrals"),
    ("edges", "fetch-referrals->check-coverage"),
]


def test_edits_keep_comments_unknown_fields_and_quoting() -> None:
    ctx = make_context()
    doc = fixture_doc()
    ok(doc, "add_jobs", {"jobs": [{"name": "Archive", "adaptor": "common"}]}, ctx)
    ok(doc, "add_edges", {"edges": [{"source": "notify-team", "target": "archive"}]}, ctx)
    ok(doc, "update_jobs", {"jobs": [{"key": "notify-team", "name": "Email team"}]}, ctx)
    ok(
        doc,
        "update_edges",
        {"edges": [{"source": "check-coverage", "target": "notify-team", "enabled": False}]},
        ctx,
    )
    after = doc.to_yaml()
    for section, key in UNTOUCHED:
        assert yaml_block(after, section, key) == yaml_block(FIXTURE_YAML, section, key)
    head = FIXTURE_YAML.split("  fetch-referrals:\n")[0]
    assert after.startswith(head)  # file comment, quoted name, unknown top-level fields
    assert yaml_block(after, "jobs", "notify-team") == (
        "  notify-team:\n"
        "    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a3333\n"
        "    name: Email team\n"
        '    adaptor: "@openfn/language-gmail@latest"\n'
        "    body: // Add operations here\n"
    )
    assert yaml_block(after, "edges", "coverage-failed").endswith("    enabled: false\n")
    assert job(doc, "archive").body == STANDARD_BODY
    assert edge(doc, "notify-team", "archive").condition_type == "on_job_success"
    reloaded = fresh(doc)
    assert reloaded.to_yaml() == after
    assert reloaded.structure == doc.structure


def test_remove_then_readd_does_not_disturb_neighbours() -> None:
    ctx = make_context()
    doc = fixture_doc()
    ok(doc, "remove_edges", {"edges": [{"source": "check-coverage", "target": "notify-team"}]}, ctx)
    ok(
        doc,
        "add_edges",
        {"edges": [{"source": "check-coverage", "target": "notify-team"}]},
        ctx,
    )
    after = doc.to_yaml()
    for section, key in UNTOUCHED:
        assert yaml_block(after, section, key) == yaml_block(FIXTURE_YAML, section, key)


FLOW_STYLE = """\
name: Flow
jobs: {a: {id: j-a, name: A, adaptor: '@openfn/language-common@latest'}, b: {id: j-b, name: B, adaptor: '@openfn/language-common@latest'}}
edges:
  a->b: {id: e-1, source_job: a, target_job: b, condition_type: on_job_success}
"""  # noqa: E501


def test_flow_style_documents_round_trip_and_edit() -> None:
    ctx = make_context()
    doc = WorkflowDocument.from_yaml(FLOW_STYLE)
    assert doc.to_yaml() == FLOW_STYLE
    ok(
        doc,
        "update_edges",
        {"edges": [{"source": "a", "target": "b", "condition_label": "L"}]},
        ctx,
    )
    ok(doc, "update_jobs", {"jobs": [{"key": "a", "new_key": "first"}]}, ctx)
    ok(doc, "add_jobs", {"jobs": [{"name": "C", "adaptor": "http"}]}, ctx)
    text = doc.to_yaml()
    assert "jobs: {first: {id: j-a, name: A," in text
    assert "  first->b: {id: e-1, source_job: first, target_job: b," in text
    assert "condition_label: L}" in text
    reloaded = fresh(doc)
    assert reloaded.structure == doc.structure
    assert reloaded.to_yaml() == text


def test_empty_string_is_an_empty_document() -> None:
    for text in ("", "   \n", "~\n"):
        doc = WorkflowDocument.from_yaml(text)
        assert doc.structure.name is None
        assert (doc.structure.jobs, doc.structure.triggers, doc.structure.edges) == ({}, {}, {})
        assert document_problems(doc) == []
    ctx = make_context()
    doc = WorkflowDocument.from_yaml("")
    ok(doc, "create_workflow", {"name": "W", "jobs": [{"name": "A", "adaptor": "http"}]}, ctx)
    assert list(doc.structure.jobs) == ["a"]


def test_empty_sections_accept_entries() -> None:
    ctx = make_context()
    doc = WorkflowDocument.from_yaml("name: W\njobs:\ntriggers:\nedges:\n")
    ok(doc, "add_jobs", {"jobs": [{"name": "A", "adaptor": "http"}]}, ctx)
    assert list(doc.structure.jobs) == ["a"]
    assert fresh(doc).structure == doc.structure


# =========================================================================== hostile input

BILLION_LAUGHS = (
    'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
)


@pytest.mark.parametrize(
    "text",
    [
        BILLION_LAUGHS,
        "name: &n Flow\n",
        "other: *missing\n",
        "jobs:\n  a: &job\n    name: A\n    adaptor: http\n",
        "base: &base {adaptor: http}\njobs:\n  a:\n    <<: *base\n    name: A\n",
    ],
    ids=["billion-laughs", "scalar-anchor", "alias", "map-anchor", "merge-key"],
)
def test_aliases_and_anchors_rejected(text: str) -> None:
    assert load_error(text).code == "yaml_alias_not_allowed"


def _nested(depth: int) -> str:
    return "x: " + "[" * depth + "]" * depth + "\n"


def test_depth_limit() -> None:
    WorkflowDocument.from_yaml(_nested(31))  # root map + 31 sequences = 32 levels
    assert load_error(_nested(32)).code == "yaml_too_deep"
    assert load_error(_nested(5000)).code == "yaml_too_deep"
    block = "".join("  " * i + f"k{i}:\n" for i in range(40)) + "  " * 40 + "v\n"
    assert load_error(block).code == "yaml_too_deep"


def test_size_limit_is_configurable() -> None:
    text = "name: " + "n" * 200 + "\n"
    WorkflowDocument.from_yaml(text)
    error = load_error(text, max_bytes=100)
    assert error.code == "document_too_large"
    assert "limit is 100 bytes" in error.message
    WorkflowDocument.from_yaml(text, max_bytes=len(text))
    multibyte = "name: " + "é" * 60 + "\n"  # 67 characters, 127 bytes
    assert load_error(multibyte, max_bytes=100).code == "document_too_large"
    big = "name: W\nnotes: " + "x" * (1024 * 1024) + "\n"
    assert load_error(big).code == "document_too_large"


@pytest.mark.parametrize(
    "text",
    [
        "name: a\nname: b\n",
        "jobs:\n  a:\n    name: A\n    name: B\n    adaptor: http\n",
        "jobs:\n  a: {id: '1', name: A, adaptor: http}\n  a: {id: '2', name: B, adaptor: http}\n",
    ],
)
def test_duplicate_keys_rejected(text: str) -> None:
    error = load_error(text)
    assert error.code == "duplicate_key"
    assert "line" in error.message


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "42\n"])
def test_non_mapping_root_rejected(text: str) -> None:
    assert load_error(text).code == "invalid_root"


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("name: 123\n", "name"),
        ("jobs:\n  a:\n    id: '1'\n    name: 123\n    adaptor: http\n", "jobs.a.name"),
        ("jobs:\n  a:\n    id: '1'\n    name: A\n", "jobs.a.adaptor"),
        ("jobs:\n  - name: A\n    adaptor: http\n", "jobs"),
        ("edges:\n  e:\n    id: x\n    target_job: a\n    enabled: 'yes'\n", "edges.e.enabled"),
        ("edges:\n  e:\n    id: x\n    target_job: a\n    condition_type: maybe\n", "edges.e"),
        ("triggers:\n  t:\n    id: x\n    type: email\n", "triggers.t.type"),
        ("triggers:\n  t:\n    id: x\n    type: cron\n    enabled: 1\n", "triggers.t.enabled"),
        ("jobs:\n  1:\n    id: '1'\n    name: A\n    adaptor: http\n", "jobs"),
        ("jobs:\n  a:\n", "jobs.a"),
    ],
)
def test_wrong_field_types_rejected(text: str, path: str) -> None:
    error = load_error(text)
    assert error.code == "invalid_field"
    assert path in error.message


@pytest.mark.parametrize("text", ["name: !custom x\n", "x: !<tag:example.com,2000:app/x> {}\n"])
def test_custom_tags_rejected(text: str) -> None:
    assert load_error(text).code == "yaml_tag_not_allowed"


@pytest.mark.parametrize(
    "text",
    [
        "extra: !!python/object:os.system {}\n",
        "extra: !!python/object/apply:os.system ['echo hi']\n",
        "name: !!python/name:os.system ''\n",
    ],
)
def test_python_tags_rejected(text: str) -> None:
    assert load_error(text).code == "yaml_tag_not_allowed"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("name: a\njobs:\n  x: [\n", "line 4"),
        ('name: "unterminated\n', "line 2"),
        ("name: a\n\tjobs: x\n", "line 2"),
        ("name: a\n---\nname: b\n", "line 2"),
    ],
)
def test_invalid_yaml_has_line_number(text: str, line: str) -> None:
    error = load_error(text)
    assert error.code == "invalid_yaml"
    assert line in error.message


@pytest.mark.parametrize(
    ("text", "section", "key"),
    [
        ("jobs:\n  a:\n    name: A\n    adaptor: '@openfn/language-http@latest'\n", "jobs", "a"),
        ("triggers:\n  t:\n    type: webhook\n", "triggers", "t"),
        ("edges:\n  e:\n    source_job: a\n    target_job: a\n", "edges", "e"),
    ],
)
def test_entry_without_id_loads_with_no_id(text: str, section: str, key: str) -> None:
    doc = WorkflowDocument.from_yaml(text)
    assert doc.structure.section(section)[key].id is None  # type: ignore[arg-type]
    assert doc.to_yaml() == text


# =========================================================================== redaction


def test_tool_results_never_carry_ids_or_bodies() -> None:
    ctx = make_context()
    doc = fixture_doc()
    result = ok(
        doc,
        "set_trigger",
        {"type": "cron", "cron_expression": "0 6 * * *", "cron_cursor_job": "check-coverage"},
        ctx,
    )
    dumped = json.dumps(result.structure)
    secrets = [
        *FIXTURE_JOB_IDS.values(),
        *FIXTURE_EDGE_IDS.values(),
        FIXTURE_TRIGGER_ID,
        "Pull new referrals since the cursor",
        "get('Coverage'",
        "state.data.items.filter",
        STANDARD_BODY,
        "cred-0001",
    ]
    for secret in secrets:
        assert secret not in dumped, secret
    assert result.structure is not None
    cron = result.structure["triggers"][0]
    assert cron["cron_cursor_job"] == "check-coverage"
    fetch = result.structure["jobs"][0]
    assert fetch == {
        "key": "fetch-referrals",
        "name": "Fetch referrals",
        "adaptor": "@openfn/language-http@6.5.1",
        "has_code": True,
        "code_lines": 5,  # the comment line is not code
    }
    assert result.structure["jobs"][2]["has_code"] is False
    assert "id" not in result.text and "4444" not in result.text


# =========================================================================== pre-existing problems

BROKEN = """\
name: Broken
jobs:
  a: {id: j-a, name: A, adaptor: '@openfn/language-common@latest'}
  b: {id: j-b, name: B, adaptor: '@openfn/language-common@latest'}
  c: {id: j-c, name: C, adaptor: '@openfn/language-common@latest'}
edges:
  a->b: {id: e-1, source_job: a, target_job: b, condition_type: on_job_success}
  b->a: {id: e-2, source_job: b, target_job: a, condition_type: on_job_success}
  b->ghost: {id: e-3, source_job: b, target_job: ghost, condition_type: always}
"""


def test_problems_of_a_loaded_broken_document() -> None:
    doc = WorkflowDocument.from_yaml(BROKEN)
    codes = {(p.code, p.subject) for p in document_problems(doc)}
    assert ("unknown_edge_target", "edges.b->ghost") in codes
    assert "cycle" in {code for code, _ in codes}


def test_pre_existing_problems_do_not_block() -> None:
    ctx = make_context()
    doc = WorkflowDocument.from_yaml(BROKEN)
    ok(doc, "update_workflow", {"name": "Repaired"}, ctx)
    ok(doc, "remove_edges", {"edges": [{"source": "b", "target": "ghost"}]}, ctx)
    assert "unknown_edge_target" not in {p.code for p in document_problems(doc)}
    ok(doc, "add_edges", {"edges": [{"source": "b", "target": "c"}]}, ctx)
    ok(doc, "remove_edges", {"edges": [{"source": "b", "target": "a"}]}, ctx)
    assert document_problems(doc) == []
    assert doc.to_yaml().startswith("name: Repaired\njobs:\n  a: {id: j-a, name: A,")


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        (
            "add_jobs",
            {"jobs": [{"key": "d", "name": "a", "adaptor": "http"}]},
            "duplicate_job_name",
        ),
        ("add_edges", {"edges": [{"source": "c", "target": "c"}]}, "cycle"),
        (
            "add_edges",
            {"edges": [{"source": "b", "target": "c"}, {"source": "c", "target": "a"}]},
            "cycle",
        ),
        (
            "add_edges",
            {"edges": [{"source": "a", "target": "c", "condition_type": "js_expression"}]},
            "missing_condition_expression",
        ),
    ],
)
def test_new_problems_still_block(tool: str, args: dict[str, object], code: str) -> None:
    ctx = make_context()
    doc = WorkflowDocument.from_yaml(BROKEN)
    fails(doc, tool, args, ctx, code)
    assert doc.to_yaml() == BROKEN
