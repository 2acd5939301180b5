from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.catalogue.adaptors import (
    DEFAULT_CATALOGUE_PATH,
    AdaptorCatalogue,
    AdaptorFunction,
    CatalogueError,
    load_catalogue,
)

REQUIRED = [
    "common",
    "http",
    "fhir",
    "mssql",
    "openmrs",
    "collections",
    "dhis2",
    "salesforce",
    "commcare",
    "googlesheets",
    "gmail",
    "postgresql",
    "kobotoolbox",
    "mailchimp",
    "msgraph",
]

MUST_HAVE_FUNCTIONS = {
    "common": {"fn", "each", "field", "fields", "dataValue", "merge", "sourceValue", "cursor"},
    "http": {"get", "post", "put", "patch", "del", "request"},
    "fhir": {"get", "create"},
    "dhis2": {"create", "update", "get", "upsert"},
    "salesforce": {"query", "create", "upsert", "bulk1.insert", "bulk2.query"},
    "googlesheets": {"appendValues", "batchUpdateValues", "getValues"},
    "postgresql": {"sql", "insert", "upsert", "insertMany"},
    "collections": {"collections.get", "collections.set", "collections.remove"},
}


@pytest.fixture(scope="module")
def catalogue() -> AdaptorCatalogue:
    return load_catalogue()


def _valid_entry(**overrides: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "name": "@openfn/language-widget",
        "version": "1.0.0",
        "description": "A test adaptor.",
        "functions": [{"name": "spin", "params": ["speed"], "description": "Spins."}],
    }
    entry.update(overrides)
    return entry


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "adaptors.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_catalogue_has_the_common_adaptors(catalogue: AdaptorCatalogue) -> None:
    assert len(catalogue.adaptors) >= 15
    for short in REQUIRED:
        adaptor = catalogue.get(short)
        assert adaptor is not None, short
        assert adaptor.functions, short
        assert adaptor.version
        assert adaptor.description


def test_every_entry_is_complete(catalogue: AdaptorCatalogue) -> None:
    for adaptor in catalogue.adaptors.values():
        for fn in adaptor.functions:
            assert fn.description and not fn.description.startswith("TODO"), (adaptor.name, fn)
            assert "\n" not in fn.description


@pytest.mark.parametrize(("short", "functions"), sorted(MUST_HAVE_FUNCTIONS.items()))
def test_adaptors_offer_the_functions_authors_need(
    catalogue: AdaptorCatalogue, short: str, functions: set[str]
) -> None:
    adaptor = catalogue.get(short)
    assert adaptor is not None
    assert functions <= {f.name for f in adaptor.functions}


@pytest.mark.parametrize(
    "name",
    [
        "@openfn/language-http",
        "language-http",
        "http",
        "HTTP",
        "@OpenFn/Language-Http",
        "  http ",
        "@openfn/language-http@latest",
        "@openfn/language-http@7.2.10",
    ],
)
def test_get_accepts_full_package_and_short_names(catalogue: AdaptorCatalogue, name: str) -> None:
    adaptor = catalogue.get(name)
    assert adaptor is not None
    assert adaptor.name == "@openfn/language-http"
    assert adaptor.short_name == "http"


def test_get_unknown_is_none(catalogue: AdaptorCatalogue) -> None:
    assert catalogue.get("@openfn/language-nope") is None
    assert catalogue.get("") is None


def test_names_are_full_and_sorted(catalogue: AdaptorCatalogue) -> None:
    names = catalogue.names()
    assert names == sorted(names)
    assert all(n.startswith("@openfn/language-") for n in names)
    assert set(names) == set(catalogue.adaptors)


def test_suggest_finds_near_misses(catalogue: AdaptorCatalogue) -> None:
    assert catalogue.suggest("@openfn/language-htp")[0] == "@openfn/language-http"
    assert "@openfn/language-postgresql" in catalogue.suggest("postgres")
    assert "@openfn/language-salesforce" in catalogue.suggest("SalesForc")
    assert len(catalogue.suggest("sql", n=1)) == 1
    assert catalogue.suggest("zzzzzzzzzzzz") == []


def test_signature_and_short_name() -> None:
    fn = AdaptorFunction(name="get", params=("path", "options", "callback"), description="x")
    assert fn.signature == "get(path, options, callback)"
    assert AdaptorFunction(name="uuid", params=(), description="x").signature == "uuid()"
    unknown = AdaptorFunction(
        name="collections.set", params=(), description="x", params_known=False
    )
    assert unknown.signature == "collections.set(...)"


@pytest.mark.parametrize(
    ("short", "name", "known"),
    [
        ("http", "post", True),
        ("http", "fn", True),  # re-exported from language-common, per the facts' exports
        ("http", "each", True),
        ("http", "http.post", False),  # language-http has no http namespace
        ("http", "dateFns.format", True),  # re-exported namespace: members not in the facts
        ("http", "sendMail", False),
        ("common", "http.post", True),
        ("common", "http.patch", False),
        ("collections", "collections.set", True),
        ("collections", "set", False),
        ("collections", "collections.nope", False),
        ("msgraph", "sendMail", False),
        ("mysql", "query", False),
        ("mysql", "sql", True),
        ("salesforce", "bulk", False),
        ("salesforce", "bulk2.query", True),
        ("gemini", "fn", True),  # the facts do not list language-gemini's exports
    ],
)
def test_has_call_follows_the_facts(
    catalogue: AdaptorCatalogue, short: str, name: str, known: bool
) -> None:
    adaptor = catalogue.get(short)
    assert adaptor is not None
    assert adaptor.has_call(name) is known


def test_suggest_call_finds_the_namespaced_and_near_names(catalogue: AdaptorCatalogue) -> None:
    collections = catalogue.get("collections")
    http = catalogue.get("http")
    assert collections is not None and http is not None
    assert collections.suggest_call("set")[0] == "collections.set"
    assert http.suggest_call("psot")[0] == "post"
    assert http.suggest_call("http.post")[0] == "post"
    assert http.suggest_call("zzzzzz") == []


def test_default_catalogue_is_cached() -> None:
    assert load_catalogue() is load_catalogue()
    assert load_catalogue(DEFAULT_CATALOGUE_PATH) is load_catalogue()


def test_custom_path_loads(tmp_path: Path) -> None:
    catalogue = load_catalogue(_write(tmp_path, {"adaptors": [_valid_entry()]}))
    assert catalogue.names() == ["@openfn/language-widget"]
    widget = catalogue.get("widget")
    assert widget is not None
    assert widget.functions[0].signature == "spin(speed)"


def test_not_json_is_a_clear_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "{not json")
    with pytest.raises(CatalogueError, match="not valid JSON") as info:
        load_catalogue(path)
    assert str(path) in info.value.message
    assert info.value.code == "invalid_catalogue"


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="cannot read"):
        load_catalogue(tmp_path / "absent.json")


@pytest.mark.parametrize(
    ("data", "mentions"),
    [
        (
            {
                "adaptors": [
                    _valid_entry(functions=[{"name": "1x", "params": [], "description": "d"}])
                ]
            },
            "adaptors.0.functions.0.name",
        ),
        ({"adaptors": [_valid_entry(exports="fn")]}, "adaptors.0.exports"),
        ({"adaptors": [_valid_entry(name="http")]}, "adaptors.0.name"),
        ({"adaptors": [_valid_entry(version="latest")]}, "adaptors.0.version"),
        ({"adaptors": [_valid_entry(surprise=1)]}, "surprise"),
        ({"adaptors": [_valid_entry(), _valid_entry()]}, "duplicate adaptor"),
        (
            {
                "adaptors": [
                    _valid_entry(functions=[{"name": "f", "params": ["a b"], "description": "d"}])
                ]
            },
            "invalid parameter names",
        ),
        (
            {
                "adaptors": [
                    _valid_entry(
                        functions=[
                            {"name": "f", "params": [], "description": "d"},
                            {"name": "f", "params": [], "description": "d"},
                        ]
                    )
                ]
            },
            "duplicate function",
        ),
        ({"adaptors": []}, "adaptors"),
        ([1, 2], "<root>"),
    ],
)
def test_malformed_catalogue_is_a_clear_error(tmp_path: Path, data: object, mentions: str) -> None:
    with pytest.raises(CatalogueError, match="malformed") as info:
        load_catalogue(_write(tmp_path, data))
    assert mentions in info.value.message
