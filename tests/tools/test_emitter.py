"""FragmentEmitter: incremental YAML is byte-identical to a full dump, and reloads.

Each top-level key and each entry of ``jobs``/``triggers``/``edges`` is dumped
as its own fragment. These tests pin down which fragment carries the comments
that sit *around* a section: the document's leading comment, the section key's
end-of-line comment and the comment lines under it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.tools.helpers import make_context, ok
from tools.document import WorkflowDocument
from tools.document.emitter import FragmentEmitter
from tools.document.yaml_io import load_yaml

HTTP = "'@openfn/language-http@latest'"


def _jobs(*keys: str) -> str:
    return "".join(
        f"  {key}:\n    id: id-{key}\n    name: {key.upper()}\n    adaptor: {HTTP}\n"
        for key in keys
    )


def _assert_sound(doc: WorkflowDocument) -> str:
    """The incremental text equals a full dump and loads again to the same structure."""
    text = doc.to_yaml()
    assert text == doc.dump_full()
    assert WorkflowDocument.from_yaml(text).structure == doc.structure
    return text


# Documents whose first key is a section with several entries, or whose section keys
# carry comments, in every arrangement that used to break the fragment scheme.
SHAPES = {
    "leading-comment-then-jobs": "# Exported\njobs:\n" + _jobs("a", "b", "c"),
    "leading-comment-block-then-jobs": "# Exported\n# by Lightning\n\njobs:\n" + _jobs("a", "b"),
    "leading-comment-then-edges": (
        "# Exported\nedges:\n"
        "  a->b:\n    source_job: a\n    target_job: b\n"
        "  b->c:\n    source_job: b\n    target_job: c\n"
    ),
    "section-eol-and-comment-line": "name: W\njobs:   # the steps\n  # keep\n"
    + _jobs("a", "b", "c"),
    "section-comment-lines-only": "name: W\njobs:\n  # keep\n\n  # and this\n" + _jobs("a", "b"),
    "leading-comment-and-section-comments": (
        "# Exported\njobs:   # the steps\n  # keep\n" + _jobs("a", "b") + "triggers:   # none yet\n"
        "  # header\n  webhook:\n    id: t\n    type: webhook\n"
        "  cron:\n    id: t2\n    type: cron\n    cron_expression: 0 7 * * *\n"
    ),
}


@pytest.mark.parametrize("text", SHAPES.values(), ids=SHAPES.keys())
def test_section_comments_are_written_once(text: str) -> None:
    doc = WorkflowDocument.from_yaml(text)
    assert doc.to_yaml() == text
    assert _assert_sound(doc) == text


def test_leading_comment_before_a_section_does_not_repeat_the_header() -> None:
    # Regression (H1): the second fragment repeated "jobs:" (duplicate_key on reload).
    text = "# Exported\njobs:\n" + _jobs("a", "b")
    doc = WorkflowDocument.from_yaml(text)
    emitted = doc.to_yaml()
    assert emitted.count("jobs:") == 1
    assert emitted.count("# Exported") == 1
    assert WorkflowDocument.from_yaml(emitted).to_yaml() == text


def test_section_comment_line_is_not_repeated_before_each_entry() -> None:
    # Regression (M1): "# keep" was written again before every entry after the first.
    text = "name: W\njobs:   # the steps\n  # keep\n" + _jobs("a", "b", "c")
    doc = WorkflowDocument.from_yaml(text)
    assert doc.to_yaml().count("# keep") == 1
    assert doc.to_yaml() == doc.dump_full() == text


@pytest.mark.parametrize("text", SHAPES.values(), ids=SHAPES.keys())
def test_edits_keep_the_incremental_text_equal_to_a_full_dump(text: str) -> None:
    ctx = make_context()
    doc = WorkflowDocument.from_yaml(text)
    doc.to_yaml()  # fill the fragment cache, as the service does on load
    section = "edges" if "edges:" in text.splitlines()[1] else "jobs"
    if section == "jobs":
        first = next(iter(doc.structure.jobs))
        ok(doc, "add_jobs", {"jobs": [{"name": "Added", "adaptor": "http"}]}, ctx)
        _assert_sound(doc)
        ok(doc, "update_jobs", {"jobs": [{"key": first, "new_key": "renamed"}]}, ctx)
        _assert_sound(doc)
        ok(doc, "remove_jobs", {"keys": ["renamed"]}, ctx)  # the first entry goes
        _assert_sound(doc)
        ok(doc, "remove_jobs", {"keys": list(doc.structure.jobs)}, ctx)  # and all the rest
        _assert_sound(doc)
        ok(doc, "add_jobs", {"jobs": [{"name": "Again", "adaptor": "http"}]}, ctx)
    else:
        ok(doc, "remove_edges", {"edges": [{"source": "a", "target": "b"}]}, ctx)
        _assert_sound(doc)
        ok(doc, "remove_edges", {"edges": [{"source": "b", "target": "c"}]}, ctx)
    text_after = _assert_sound(doc)
    for comment in ("# Exported", "# the steps", "# keep", "# none yet", "# header"):
        assert text_after.count(comment) == text.count(comment), comment


def test_removing_the_first_entry_refreshes_the_new_first_fragment() -> None:
    # The first entry's fragment carries the section header; the next entry, cached
    # as a non-first fragment, must be re-dumped with it once it becomes first.
    ctx = make_context()
    text = "# Exported\njobs:   # the steps\n  # keep\n" + _jobs("a", "b", "c")
    doc = WorkflowDocument.from_yaml(text)
    doc.to_yaml()
    ok(doc, "remove_jobs", {"keys": ["a"]}, ctx)
    assert doc.to_yaml() == "# Exported\njobs:   # the steps\n  # keep\n" + _jobs("b", "c")
    _assert_sound(doc)


def test_emitter_matches_a_full_dump_on_its_own() -> None:
    emitter = FragmentEmitter()
    text = SHAPES["leading-comment-and-section-comments"]
    root = load_yaml(text)
    assert emitter.emit(root) == text
    assert emitter.emit(root) == text  # from the cache
    emitter.invalidate_section_head("jobs")
    assert emitter.emit(root) == text


def test_a_keep_chomped_body_mid_document_gets_no_document_end_marker() -> None:
    # A body ending in a blank line is written "|+"; dumped on its own, its fragment
    # ends with the "..." document-end marker, which a full dump writes only at the end.
    text = (
        "name: W\njobs:\n"
        "  a:\n    id: id-a\n    name: A\n    adaptor: '@openfn/language-http@latest'\n"
        "    body: |+\n      get('/a');\n\n"
        f"{_jobs('b')}"
        "triggers:\n  webhook:\n    id: t\n    type: webhook\n    body: |+\n      x\n\n...\n"
    )
    doc = WorkflowDocument.from_yaml(text)
    assert doc.to_yaml() == text
    assert _assert_sound(doc) == text
    ok(doc, "add_jobs", {"jobs": [{"name": "C", "adaptor": "http"}]}, make_context())
    after = _assert_sound(doc)
    assert after.count("...") == 1 and after.endswith("      x\n\n...\n")


def test_a_copy_is_as_warm_as_its_original(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy reuses the original's fragments: its first edit re-emits only the entry
    the edit touched, and both documents stay independent and sound."""
    text = SHAPES["leading-comment-and-section-comments"]
    original = WorkflowDocument.from_yaml(text)
    original.to_yaml()
    emitted: list[tuple[str, str]] = []
    real_entry = FragmentEmitter._entry

    def counting_entry(self: FragmentEmitter, root: Any, section: str, entries: Any, key: Any,
                       *flags: bool) -> str:  # fmt: skip
        emitted.append((section, key))
        return real_entry(self, root, section, entries, key, *flags)

    monkeypatch.setattr(FragmentEmitter, "_entry", counting_entry)
    copy = original.copy()
    assert copy.to_yaml() == text and emitted == []
    ok(copy, "update_jobs", {"jobs": [{"key": "b", "name": "Bee"}]}, make_context())
    assert emitted == [("jobs", "b")]
    assert _assert_sound(copy) == text.replace("name: B\n", "name: Bee\n")
    assert original.to_yaml() == text
