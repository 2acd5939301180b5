from __future__ import annotations

import json
import shutil
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tools.catalogue import adaptor_docs
from tools.catalogue.adaptor_docs import (
    AdaptorDocsError,
    install_adaptor_docs,
    package_docs_dir_default,
    parse_ast,
    read_package_docs,
)
from tools.catalogue.adaptors import load_catalogue
from tools.catalogue.docs_search import DocHit, DocsIndex
from tools.catalogue.dts_docs import parse_dts

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def index() -> DocsIndex:
    return DocsIndex.build(load_catalogue())


def _titles(hits: list[DocHit]) -> list[str]:
    return [h.title for h in hits]


# --------------------------------------------------------------------------- ranking


def test_post_json_ranks_http_post_first(index: DocsIndex) -> None:
    for query in ("post json to endpoint", "how do I post JSON to an HTTP endpoint?"):
        hits = index.search(query)
        assert any(t.startswith("http.post(") for t in _titles(hits)[:3]), _titles(hits)
        assert hits[0].kind == "function"
        assert hits[0].adaptor == "@openfn/language-http"


def test_cron_query_returns_cron_concept(index: DocsIndex) -> None:
    hits = index.search("cron every weekday")
    assert hits[0].kind == "concept"
    assert hits[0].title.startswith("Cron schedules")
    assert hits[0].adaptor is None
    assert "1-5" in hits[0].text


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("append rows to a google sheet", "googlesheets.appendValues("),
        ("loop over every item in an array", "common.each("),
        ("insert many records into sql server", "mssql.insertMany("),
        ("run a SOQL query in salesforce", "salesforce.query("),
        ("send an sms with twilio", "twilio.sendSMS("),
        ("format a date", "common.dateFns.format("),
    ],
)
def test_common_questions_find_the_right_function(
    index: DocsIndex, query: str, expected: str
) -> None:
    assert any(t.startswith(expected) for t in _titles(index.search(query))[:3])


def test_failure_branch_finds_condition_concept(index: DocsIndex) -> None:
    hits = index.search("run the alert only when the previous step fails")
    assert hits[0].title == "Edge conditions: on_job_failure"


def test_scores_are_descending_and_results_deterministic(index: DocsIndex) -> None:
    hits = index.search("get data from an api", num_results=10)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    rebuilt = DocsIndex.build(load_catalogue())
    assert rebuilt.search("get data from an api", num_results=10) == hits


# --------------------------------------------------------------------------- filters, limits


@pytest.mark.parametrize("name", ["dhis2", "@openfn/language-dhis2", "Language-DHIS2"])
def test_adaptor_filter_restricts_results(index: DocsIndex, name: str) -> None:
    hits = index.search("create update get", adaptor=name, num_results=20)
    assert hits
    assert {h.adaptor for h in hits} == {"@openfn/language-dhis2"}


def test_adaptor_filter_excludes_concepts(index: DocsIndex) -> None:
    assert index.search("cron every weekday", adaptor="http") == []


def test_unknown_adaptor_filter_raises(index: DocsIndex) -> None:
    with pytest.raises(ValueError, match=r"unknown adaptor 'htp'.*language-http"):
        index.search("get", adaptor="htp")


@pytest.mark.parametrize(("asked", "at_most"), [(0, 1), (-3, 1), (1, 1), (7, 7), (100, 20)])
def test_num_results_is_clamped(index: DocsIndex, asked: int, at_most: int) -> None:
    hits = index.search("get post create update data records", num_results=asked)
    assert len(hits) == at_most


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"unbalanced',
        "(",
        ")",
        "AND",
        "OR NOT",
        "*",
        "NEAR(",
        'NEAR("a" "b", 2)',
        "title:post",
        "-",
        "--drop table",
        "^post",
        "post AND",
        "{ } [ ] : ; ' \\",
        "",
        "   ",
        "\x00",
        "é ü 中文",
        "x" * 10_000,
        " ".join(["word"] * 500),
    ],
)
def test_hostile_queries_do_not_raise(index: DocsIndex, query: str) -> None:
    hits = index.search(query)
    assert isinstance(hits, list)
    assert len(hits) <= 5


def test_fts_keywords_are_searched_as_words(index: DocsIndex) -> None:
    hits = index.search("post AND json OR NOT endpoint*")
    assert _titles(hits)[0].startswith("http.post(")


def test_stopword_only_query_still_searches(index: DocsIndex) -> None:
    hits = index.search("as", adaptor="common")
    assert any(t.startswith("common.as(") for t in _titles(hits))


def test_concurrent_searches(index: DocsIndex) -> None:
    expected = index.search("post json", num_results=3)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda _: index.search("post json", num_results=3), range(64)))
    assert all(r == expected for r in results)


def test_custom_concepts_dir(tmp_path: Path) -> None:
    (tmp_path / "widgets.md").write_text(
        "# Widgets\n\nIntro about gizmos.\n\n## Spinning\n\nWidgets spin clockwise.\n"
    )
    index = DocsIndex.build(load_catalogue(), concepts_dir=tmp_path)
    hits = index.search("spin clockwise")
    assert hits[0].title == "Widgets: Spinning"
    assert hits[0].kind == "concept"
    assert all(h.kind != "concept" for h in index.search("cron weekday"))


# --------------------------------------------------------------------------- package docs

FAKE_AST: dict[str, Any] = {
    "operations": [
        {
            "name": "frobnicate",
            "params": ["target", "options"],
            "docs": {
                "description": "Frobnicates the zorblax with extra care.",
                "tags": [
                    {"title": "public", "description": None, "type": None},
                    {"title": "function", "description": None, "name": None},
                    {
                        "title": "example",
                        "description": "frobnicate('quux', { deep: true })",
                        "caption": "Deep frobnication",
                    },
                    {"title": "param", "description": "What to frobnicate", "name": "target"},
                    {"title": "param", "description": "Settings", "name": "options"},
                    {"title": "param", "description": "Go deeper", "name": "options.deep"},
                    {"title": "returns", "description": None, "type": None},
                ],
            },
            "valid": True,
        },
        {
            # some real entries carry "params": {} - fall back to the @param tags
            "name": "mapItems",
            "params": {},
            "docs": {
                "description": "Maps items.",
                "tags": [
                    {"title": "param", "description": "", "name": "path"},
                    {"title": "param", "description": "", "name": "callback"},
                    {"title": "param", "description": "", "name": "callback.index"},
                ],
            },
            "valid": False,
        },
        {
            "name": "secretHelper",
            "params": ["x"],
            "docs": {"description": "Hidden.", "tags": [{"title": "private"}]},
            "valid": True,
        },
        {"params": ["nameless"], "docs": {}},
        "not an object",
    ],
    "exports": [],
    "common": [{"name": "fn", "params": ["func"], "docs": {"description": "from common"}}],
}

FAKE_DTS = """
/**
 * Fetch blobs from the store.
 * Second line of the description.
 * @public
 * @function
 * @param {string} name - The store name
 * @param {object} [query] - Optional filter
 * @example <caption>Fetch everything</caption>
 * blobs.fetch('store', { all: true })
 */
export function fetch(name: string, query?: { a: (s: any) => Promise<any> }): Operation;
export function internalHelper(x: any): void;
"""


def _fake_package(
    root: Path, name: str, ast: object, version: str = "1.2.3", dts: str | None = None
) -> Path:
    package = root / "node_modules" / "@openfn" / name
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": f"@openfn/{name}", "version": version})
    )
    (package / "ast.json").write_text(json.dumps(ast))
    if dts is not None:
        (package / "types").mkdir()
        (package / "types" / "blobs.d.ts").write_text(dts)
    return package


def test_parse_ast_reads_public_operations() -> None:
    functions = parse_ast(FAKE_AST)
    assert [f.signature for f in functions] == [
        "frobnicate(target, options)",
        "mapItems(path, callback)",
    ]
    frob = functions[0]
    assert frob.description == "Frobnicates the zorblax with extra care."
    assert frob.examples == ("Deep frobnication\nfrobnicate('quux', { deep: true })",)
    assert ("options.deep", "Go deeper") in frob.param_docs
    assert "zorblax" in frob.doc_text()


def test_parse_ast_rejects_non_objects() -> None:
    with pytest.raises(AdaptorDocsError):
        parse_ast([])


def test_parse_dts_reads_public_jsdoc_functions() -> None:
    (fetch,) = parse_dts(FAKE_DTS)
    assert fetch.signature == "fetch(name, query)"
    assert fetch.description == "Fetch blobs from the store. Second line of the description."
    assert fetch.param_docs[0] == ("name", "The store name")
    assert fetch.examples == ("Fetch everything\nblobs.fetch('store', { all: true })",)


def test_parse_dts_keeps_example_code_whole_and_reads_every_param_form() -> None:
    dts = """
/**
 * Insert each item.
 * @public
 * @param {string} table - The table,
 *   continued on the next line
 * @param {object} [options] - Options
 * @param {number} [options.limit=10] - At most this many
 * @example <caption>Each item</caption>
 * each(
 *   $.data,
 *   // the item under iteration
 *   insert('patient', { id: $.data.id })
 * );
 * @returns {Operation}
 */
export function insertEach(table: string, options?: object, ...rest: any[]): Operation;
"""
    (insert,) = parse_dts(dts)
    assert insert.signature == "insertEach(table, options, ...rest)"
    assert insert.param_docs == (
        ("table", "The table, continued on the next line"),
        ("options", "Options"),
        ("options.limit", "At most this many"),
    )
    assert insert.examples == (
        "Each item\neach(\n  $.data,\n  // the item under iteration\n"
        "  insert('patient', { id: $.data.id })\n);",
    )


def test_package_docs_are_indexed(tmp_path: Path) -> None:
    _fake_package(tmp_path, "language-widget", FAKE_AST)
    index = DocsIndex.build(load_catalogue(), package_docs_dir=tmp_path)
    hits = index.search("zorblax")
    assert hits[0].kind == "package-doc"
    assert hits[0].adaptor == "@openfn/language-widget"
    assert hits[0].title == "widget.frobnicate(target, options)"
    assert "frobnicate('quux'" in hits[0].text
    assert "@openfn/language-widget@1.2.3" in hits[0].text
    # a package that is not in the catalogue is still a valid filter
    filtered = index.search("maps items", adaptor="widget")
    assert {h.adaptor for h in filtered} == {"@openfn/language-widget"}
    assert all("secretHelper" not in h.title for h in index.search("hidden secretHelper"))


def test_empty_ast_falls_back_to_type_declarations(tmp_path: Path) -> None:
    _fake_package(
        tmp_path,
        "language-blobs",
        {"operations": [], "exports": [], "common": []},
        dts=FAKE_DTS,
    )
    docs = read_package_docs(tmp_path / "node_modules" / "@openfn" / "language-blobs")
    assert [f.name for f in docs.functions] == ["fetch"]
    index = DocsIndex.build(load_catalogue(), package_docs_dir=tmp_path)
    assert index.search("fetch blobs from the store")[0].title == "blobs.fetch(name, query)"


def test_broken_packages_are_skipped(tmp_path: Path) -> None:
    package = _fake_package(tmp_path, "language-broken", {})
    (package / "ast.json").write_text("{broken")
    _fake_package(tmp_path, "language-widget", FAKE_AST)
    index = DocsIndex.build(load_catalogue(), package_docs_dir=tmp_path)
    assert index.search("zorblax")[0].adaptor == "@openfn/language-widget"


def test_missing_package_dir_is_fine(tmp_path: Path) -> None:
    index = DocsIndex.build(load_catalogue(), package_docs_dir=tmp_path / "nothing-here")
    assert all(h.kind != "package-doc" for h in index.search("get post", num_results=20))


def test_package_docs_dir_default() -> None:
    assert package_docs_dir_default() == REPO / ".cache" / "adaptors"
    assert package_docs_dir_default("/tmp/x") == Path("/tmp/x")
    assert package_docs_dir_default("") == REPO / ".cache" / "adaptors"


def test_install_without_npm_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adaptor_docs.shutil, "which", lambda _name: None)
    with pytest.raises(AdaptorDocsError, match="npm is not installed"):
        install_adaptor_docs(tmp_path)


def test_install_rejects_non_adaptor_names(tmp_path: Path) -> None:
    with pytest.raises(AdaptorDocsError, match="not an OpenFn adaptor"):
        install_adaptor_docs(tmp_path, ["left-pad; rm -rf /"], npm=shutil.which("true") or "true")


def test_unsafe_tarball_is_refused(tmp_path: Path) -> None:
    tarball = tmp_path / "evil.tgz"
    payload = tmp_path / "payload.txt"
    payload.write_text("x")
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(payload, arcname="package/../../escaped.txt")
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(AdaptorDocsError, match="cannot unpack"):
        adaptor_docs._safe_extract(tarball, dest)
    assert not (tmp_path / "escaped.txt").exists()
