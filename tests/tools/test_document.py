"""WorkflowDocument: lossless round-trip, hostile input, redaction, pre-existing problems."""

from __future__ import annotations

import json

import pytest

from tests.tools.helpers import (
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
from tools.document.structure import RemoveEntry
from tools.errors import DocumentError
from tools.jobcode.stitch import stitch_job_code
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


# =========================================================================== comments around edits

HTTP = "'@openfn/language-http@latest'"


def _job(key: str, tail: str = "") -> str:
    return f"  {key}:\n    id: id-{key}\n    name: {key.upper()}\n    adaptor: {HTTP}{tail}\n"


def _sound(doc: WorkflowDocument) -> str:
    """Incremental text equals a full dump, and both load again to the same structure."""
    text = doc.to_yaml()
    assert text == doc.dump_full()
    assert WorkflowDocument.from_yaml(text).structure == doc.structure
    return text


COMMENTED_SECTIONS = f"""\
name: W
jobs:
  # c
{_job("a")}\
edges:   # wiring
  a->a2:
    id: e-1
    source_job: a
    target_job: a
"""


def test_emptying_commented_sections_keeps_the_document_loadable() -> None:
    # Regression (H2): ruamel wrote "jobs:\n  # c\n{}" and "edges:   # wiring\n{}".
    ctx = make_context()
    doc = WorkflowDocument.from_yaml(COMMENTED_SECTIONS)
    ok(doc, "remove_jobs", {"keys": ["a"]}, ctx)
    text = _sound(doc)
    assert text == "name: W\njobs: {}\n  # c\nedges: {} # wiring\n"
    WorkflowDocument.from_yaml(doc.dump_full())
    # Starting over in the emptied sections brings the header comments back above them.
    ok(
        doc,
        "create_workflow",
        {
            "name": "Again",
            "jobs": [{"name": "X", "adaptor": "http"}, {"name": "Y", "adaptor": "http"}],
            "edges": [{"source": "x", "target": "y"}],
        },
        ctx,
    )
    text = _sound(doc)
    assert text.startswith("name: Again\njobs:\n  # c\n  x:\n")
    assert "\nedges:   # wiring\n  x->y:\n" in text


def test_emptying_the_last_section_keeps_the_end_of_file_comment() -> None:
    ctx = make_context()
    text = f"name: W\njobs:   # steps\n  # header\n{_job('a')}# end of file\n"
    doc = WorkflowDocument.from_yaml(text)
    ok(doc, "remove_jobs", {"keys": ["a"]}, ctx)
    assert _sound(doc) == "name: W\njobs: {} # steps\n  # header\n# end of file\n"
    reloaded = fresh(doc)
    ok(reloaded, "add_jobs", {"jobs": [{"name": "B", "adaptor": "http"}]}, ctx)
    after = _sound(reloaded)
    assert after.startswith("name: W\njobs:")
    assert after.split("\n")[1:4] == [after.split("\n")[1], "  # header", "  b:"]
    assert after.split("\n")[1].endswith(" # steps")
    assert after.endswith("body: // Add operations here\n# end of file\n")


def test_apply_refuses_a_result_that_would_not_load(monkeypatch: pytest.MonkeyPatch) -> None:
    # The guard behind the H2 fix: should an emptied section ever stay in block style
    # with comments, the call fails and the document is left as it was.
    monkeypatch.setattr(WorkflowDocument, "_close_section", lambda self, name, extra: None)
    ctx = make_context()
    doc = WorkflowDocument.from_yaml(COMMENTED_SECTIONS)
    before = doc.to_yaml()
    result = fails(doc, "remove_jobs", {"keys": ["a"]}, ctx, "unloadable_result")
    assert "not changed" in result.text
    assert doc.dump_full() == before
    assert list(doc.structure.jobs) == ["a"]
    with pytest.raises(DocumentError) as info:
        doc.apply([RemoveEntry("jobs", "a")], doc.structure)
    assert info.value.code == "unloadable_result"
    assert doc.to_yaml() == doc.dump_full() == before


BETWEEN = f"""\
name: W
jobs:
{_job("a")}\
  # about b
{_job("b", "   # pinned")}\
  # about c
{_job("c")}\
# end of file
"""


def test_removing_an_entry_keeps_the_comment_above_its_neighbour() -> None:
    # Regression (M2): ruamel holds "# about b" on a's last value; it went with a.
    ctx = make_context()
    doc = WorkflowDocument.from_yaml(BETWEEN)
    ok(doc, "remove_jobs", {"keys": ["a"]}, ctx)
    assert _sound(doc) == (
        f"name: W\njobs:\n  # about b\n{_job('b', '   # pinned')}  # about c\n{_job('c')}"
        "# end of file\n"
    )
    # b's own comments (end of line, and now the line above it) go with it; c's stay.
    ok(doc, "remove_jobs", {"keys": ["b"]}, ctx)
    assert _sound(doc) == f"name: W\njobs:\n  # about c\n{_job('c')}# end of file\n"


def test_removing_the_last_entry_keeps_the_end_of_file_comment() -> None:
    # Regression (M2): "# end of file" is held by the last entry's last value.
    ctx = make_context()
    doc = WorkflowDocument.from_yaml(BETWEEN)
    ok(doc, "remove_jobs", {"keys": ["c"]}, ctx)
    text = _sound(doc)
    assert text.endswith(
        "    adaptor: '@openfn/language-http@latest'   # pinned\n  # about c\n# end of file\n"
    )
    ok(doc, "remove_jobs", {"keys": ["b"]}, ctx)
    assert _sound(doc).endswith("# about b\n  # about c\n# end of file\n")


def test_appending_keeps_the_end_of_file_comment_last() -> None:
    # Regression (M2): the new step was written after "# end of file".
    ctx = make_context()
    doc = WorkflowDocument.from_yaml(BETWEEN)
    ok(doc, "add_jobs", {"jobs": [{"name": "D", "adaptor": "http"}]}, ctx)
    text = _sound(doc)
    assert text.startswith(BETWEEN.removesuffix("# end of file\n"))
    assert text.endswith("    body: // Add operations here\n# end of file\n")


def test_appending_keeps_a_comment_meant_for_the_next_section_before_it() -> None:
    ctx = make_context()
    text = (
        f"name: W\njobs:\n{_job('a')}# the triggers\ntriggers:\n  webhook:\n    id: t\n"
        "    type: webhook\n"
    )
    doc = WorkflowDocument.from_yaml(text)
    ok(doc, "add_jobs", {"jobs": [{"name": "D", "adaptor": "http"}]}, ctx)
    after = _sound(doc)
    assert "    body: // Add operations here\n# the triggers\ntriggers:\n" in after
    # A section created between two others takes the comment the same way.
    doc = WorkflowDocument.from_yaml("name: W   # n\n# the edges\nedges: {}\n")
    ok(doc, "add_jobs", {"jobs": [{"name": "D", "adaptor": "http"}]}, ctx)
    assert _sound(doc).endswith("    body: // Add operations here\n# the edges\nedges: {}\n")


def test_changing_the_last_field_keeps_the_comment_after_it() -> None:
    ctx = make_context()
    text = f"""\
name: W
jobs:
{_job("a")}\
triggers:
  webhook:
    id: t
    type: webhook
    enabled: false
    webhook_reply: after_completion   # reply
  # above the edges
edges:
  e:
    id: e-1
    source_job: a
    target_job: a
    condition_type: on_job_success
# end of file
"""
    doc = WorkflowDocument.from_yaml(text)
    # cron drops webhook_reply, the trigger's last field; the line after it stays.
    ok(doc, "set_trigger", {"type": "cron", "cron_expression": "0 7 * * *"}, ctx)
    assert "    cron_expression: 0 7 * * *\n  # above the edges\nedges:\n" in _sound(doc)
    # A field written after the edge's last one goes before the end-of-file comment.
    ok(doc, "update_edges", {"edges": [{"source": "a", "target": "a", "enabled": False}]}, ctx)
    assert _sound(doc).endswith(
        "    condition_type: on_job_success\n    enabled: false\n# end of file\n"
    )


def test_untouched_entries_keep_every_comment_through_many_edits() -> None:
    ctx = make_context()
    doc = WorkflowDocument.from_yaml(BETWEEN)
    ok(doc, "add_jobs", {"jobs": [{"name": "D", "adaptor": "http"}]}, ctx)
    ok(doc, "remove_jobs", {"keys": ["a", "d"]}, ctx)
    ok(doc, "update_jobs", {"jobs": [{"key": "c", "name": "C2"}]}, ctx)
    ok(doc, "set_trigger", {"type": "webhook"}, ctx)
    text = _sound(doc)
    for comment in ("# about b", "# pinned", "# about c", "# end of file"):
        assert text.count(comment) == 1, comment
    assert fresh(doc).to_yaml() == text


# =========================================================================== limits


def test_an_overlong_integer_is_a_document_error() -> None:
    # Regression (L): Python's int-digit limit surfaced as a bare ValueError.
    error = load_error("foo: " + "9" * 5000 + "\n")
    assert error.code == "number_too_long"
    assert "quote it" in error.message
    assert load_error("foo: 2024-13-45\n").code == "invalid_value"


def test_a_mutation_cannot_grow_the_document_past_the_limit() -> None:
    # Regression (L): apply never checked max_bytes.
    ctx = make_context()
    text = "name: W\n"
    doc = WorkflowDocument.from_yaml(text, max_bytes=300)
    ok(doc, "add_jobs", {"jobs": [{"name": "A", "adaptor": "http"}]}, ctx)
    before = doc.to_yaml()
    assert len(before) <= 300
    result = fails(
        doc,
        "add_jobs",
        {"jobs": [{"name": "B", "adaptor": "http"}, {"name": "C", "adaptor": "http"}]},
        ctx,
        "document_too_large",
    )
    assert "limit is 300 bytes" in result.text
    assert result.text.endswith("The workflow was not changed.")
    assert doc.dump_full() == before
    assert list(doc.structure.jobs) == ["a"]
    ok(doc, "update_workflow", {"name": "V"}, ctx)  # still editable afterwards
    assert _sound(doc).startswith("name: V\n")


KEEP_CHOMP = f"""\
name: W
jobs:
  a:
    id: id-a
    name: A
    adaptor: {HTTP}
    body: |+
      get('/a');

  # about b
{_job("b")}\
# end of file
"""


def test_a_comment_after_a_keep_chomped_body_stays_loadable() -> None:
    # ruamel writes a comment after a "|+" body followed by a mid-document "...",
    # which does not load; the lines are kept above the next key instead.
    doc = WorkflowDocument.from_yaml(KEEP_CHOMP)
    assert doc.to_yaml() == doc.dump_full() == KEEP_CHOMP
    assert fresh(doc).structure == doc.structure


@pytest.mark.parametrize(
    ("body", "written"),
    [
        ("get('/x');\n", "    body: |\n      get('/x');\n  # about b\n"),
        ("get('/x');\n\n", "    body: |+\n      get('/x');\n\n  # about b\n"),
        ("get('/x');", "    body: get('/x');\n  # about b\n"),
    ],
    ids=["clip", "keep", "single-line"],
)
def test_new_code_keeps_the_comment_after_the_step(body: str, written: str) -> None:
    doc = WorkflowDocument.from_yaml(
        BETWEEN.replace(f"{_job('a')}", f"{_job('a')}    body: // Add operations here\n")
    )
    assert stitch_job_code(doc, "a", body).ok
    text = _sound(doc)
    assert written in text
    assert job(doc, "a").body == body
    assert fresh(doc).to_yaml() == text
