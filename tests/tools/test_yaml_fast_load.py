"""load_yaml's libyaml path: the same tree as the pure round-trip scanner, or no answer."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from tests.tools.yaml_strategies import keys, sample, scalars
from tools.document.yaml_io import _fast_load, _GuardedComposer, dump_yaml, load_yaml, make_yaml
from tools.errors import DocumentError


def _pure(text: str) -> Any:
    yaml = make_yaml()
    yaml.Composer = _GuardedComposer
    return yaml.load(text)


def _document(entries: dict[str, dict[str, Any]]) -> str:
    jobs = CommentedMap()
    for key, fields in entries.items():
        entry = CommentedMap()
        for name, value in fields.items():
            entry[name] = value
        jobs[key] = entry
    root = CommentedMap()
    root["name"] = "W"
    root["jobs"] = jobs
    return dump_yaml(root)


def _taken(fast: Any) -> Any:
    """``fast`` as it is; the share libyaml read shows in the statistics."""
    event("read by libyaml" if fast is not None else "left to the pure scanner")
    return fast


def _check_document(entries: dict[str, dict[str, Any]]) -> Any:
    """Values, their scalar types (quoting, block style) and key order all agree: the
    two trees dump to the same bytes. The fast tree, or ``None``."""
    text = _document(entries)
    fast = _fast_load(text, _GuardedComposer)
    if fast is None:
        return None  # the pure scanner reads it (comments, tabs, folded scalars, errors)
    pure = _pure(text)
    assert fast == pure
    assert dump_yaml(fast) == dump_yaml(pure)
    return fast


# Entries of up to three fields: over half of these documents are read by libyaml.
documents = st.dictionaries(
    keys, st.dictionaries(keys, scalars, min_size=1, max_size=3), min_size=1, max_size=3
)


@settings(max_examples=300, deadline=None)
@given(entries=documents)
def test_fast_tree_is_the_pure_tree(entries: dict[str, dict[str, Any]]) -> None:
    _taken(_check_document(entries))


# Pieces of hand-written YAML, valid or not, and of what tells the scanners apart.
PIECES = st.sampled_from(
    ["a", "b:", " ", "  ", "\n", "- ", "'", '"', "|", "|-", "|+", "{", "}", "[", "]", ",",
     ":", "? ", "---", "...", "\\", "x: 1\n", "  y: |\n    t\n", "\r\n", "!", "&", "*",
     "=", "@", "`", "\u00e9", "\x07", "\ufeff", "0x1", "1.5", "~", "null", "<<: ", "\n\n",
     "key: 'v'\n", 'k: "v\\n"\n', "a:\n  b: 1\n", "- x\n", "  - y\n", "\t", "#", " #c",
     "%", ">", ">-\n  t\n", "?", "-1", "0o7", "yes", "on", "1e3", "\u2028", "\x85", "\r"]
)  # fmt: skip


def _check_pieces(text: str) -> Any:
    """The fast tree, if libyaml read ``text``, and then the pure scanner's too."""
    fast = _fast_load(text, _GuardedComposer)
    if fast is not None:
        assert dump_yaml(fast) == dump_yaml(_pure(text))
    return fast


pieced = st.lists(PIECES, max_size=25).map("".join)


@settings(max_examples=1500, deadline=None)
@given(text=pieced)
def test_what_libyaml_accepts_the_pure_scanner_reads_the_same(text: str) -> None:
    _taken(_check_pieces(text))


def test_the_properties_are_mostly_about_libyaml_trees() -> None:
    """Both properties hold only where libyaml reads the text: it must for a good
    share of their examples; of the pieced texts, some mappings and lists too."""
    # Measured on these samples (hypothesis 6.170.15): 60% of the documents, 18% of
    # the pieced texts, 5% mappings or lists; the bounds leave room for another sample.
    documents_read = sample(_check_document, 120, entries=documents)
    assert sum(fast is not None for fast in documents_read) / len(documents_read) >= 0.3
    pieces_read = sample(_check_pieces, 600, text=pieced)
    assert sum(fast is not None for fast in pieces_read) / len(pieces_read) >= 0.08
    collections = [fast for fast in pieces_read if isinstance(fast, (CommentedMap, CommentedSeq))]
    assert len(collections) / len(pieces_read) >= 0.02


IMPORTED = (
    "name: Import\njobs:\n  s0:\n    name: Step 0\n    adaptor: '@openfn/language-http@latest'\n"
    '    body: |\n      get("/items");\n      fn(s => s);\n'
    "edges:\n  s0->s1:\n    source_job: s0\n    target_job: s1\n    enabled: true\n"
)


def test_comment_free_text_takes_the_fast_path() -> None:
    assert _fast_load(IMPORTED, _GuardedComposer) is not None
    assert dump_yaml(load_yaml(IMPORTED)) == IMPORTED


@pytest.mark.parametrize(
    "text",
    [
        "name: W  # kept\njobs: {}\n",
        "name: >\n  folded\n  text\n",
        "%YAML 1.1\n---\nflag: yes\n",
        "body: |\n  if (a)\treturn;\n",
    ],
    ids=["comment", "folded", "directive", "tab"],
)
def test_what_only_the_pure_scanner_keeps_goes_to_it(text: str) -> None:
    assert _fast_load(text, _GuardedComposer) is None
    assert dump_yaml(load_yaml(text)) == dump_yaml(_pure(text))


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("a: &x 1\nb: *x\n", "yaml_alias_not_allowed"),
        ("a: !!python/object:os.system x\n", "yaml_tag_not_allowed"),
        ("a: 1\na: 2\n", "duplicate_key"),
        ("a: [1, 2\n", "invalid_yaml"),
        ("a:" + " [" * 40 + "]" * 40 + "\n", "yaml_too_deep"),
    ],
    ids=["alias", "tag", "duplicate", "unclosed", "deep"],
)
def test_refusals_are_the_pure_scanners(text: str, code: str) -> None:
    """What libyaml refuses, or the guard refuses on its events, is answered by the
    pure scanner: the same codes and messages as without libyaml."""
    with pytest.raises(DocumentError) as caught:
        load_yaml(text)
    assert caught.value.code == code
