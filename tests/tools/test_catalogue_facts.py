"""The catalogue agrees with OpenFn's adaptor facts and is what the script generates."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.generate_catalogue import (
    CATALOGUE_PATH,
    FACTS_PATH,
    GenerationError,
    generate,
    generated_text,
    name_description,
)
from tools.catalogue.adaptors import load_catalogue

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def facts() -> dict[str, Any]:
    return {a["name"]: a for a in json.loads(FACTS_PATH.read_text(encoding="utf-8"))["adaptors"]}


def test_committed_catalogue_is_what_the_script_generates() -> None:
    assert CATALOGUE_PATH.read_text(encoding="utf-8") == generated_text(), (
        "tools/catalogue/data/adaptors.json is stale: run `make catalogue`"
    )


def test_check_mode_passes_on_the_committed_catalogue() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/generate_catalogue.py", "--check"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_every_adaptor_of_the_facts_is_in_the_catalogue_at_its_version(
    facts: dict[str, Any],
) -> None:
    catalogue = load_catalogue()
    assert len(facts) == 108
    assert set(catalogue.names()) == set(facts)
    for name, adaptor in catalogue.adaptors.items():
        assert adaptor.version == facts[name]["version"], name


def test_every_catalogue_function_exists_in_the_facts_for_that_version(
    facts: dict[str, Any],
) -> None:
    missing = []
    for name, adaptor in load_catalogue().adaptors.items():
        fact = facts[name]
        assert adaptor.version == fact["version"]
        for fn in adaptor.functions:
            namespace, dot, member = fn.name.partition(".")
            if dot:
                if member not in fact["namespaces"].get(namespace, []) or fn.params_known:
                    missing.append((name, fn.name))
                continue
            documented = fact["functions"].get(fn.name)
            params = documented.get("params") if documented else None
            if documented is None or list(fn.params) != (
                params if isinstance(params, list) else []
            ):
                missing.append((name, fn.signature))
    assert missing == []


def test_removed_names_are_gone_and_their_real_spellings_are_there() -> None:
    catalogue = load_catalogue()
    gone = {"msgraph": "sendMail", "mysql": "query", "salesforce": "bulk", "collections": "set"}
    for short, name in gone.items():
        adaptor = catalogue.get(short)
        assert adaptor is not None and adaptor.function(name) is None, (short, name)
    collections = catalogue.get("collections")
    assert collections is not None and collections.function("collections.set") is not None


def test_hand_written_descriptions_are_kept() -> None:
    collections = load_catalogue().get("collections")
    assert collections is not None
    described = collections.function("collections.set")
    assert described is not None and "Store one or more values" in described.description


def _tiny_facts() -> dict[str, Any]:
    return {
        "source": "test",
        "commit": "0",
        "date": "2026-01-01",
        "adaptors": [
            {
                "name": "@openfn/language-widget",
                "label": None,
                "version": "1.2.3",
                "functions": {
                    "spinFast": {"params": ["speed"], "kind": "operation"},
                    "map": {"params": {}, "kind": "operation"},
                },
                "exports": ["spinFast", "fn", "map", "util"],
                "namespaces": {"util": ["ERROR_CODE", "setMockClient", "encode"]},
            }
        ],
    }


def test_generate_lists_functions_and_namespace_members_from_the_facts() -> None:
    doc = generate(_tiny_facts(), {"adaptors": {}})
    [widget] = doc["adaptors"]
    assert widget["description"] == "OpenFn adaptor for widget."
    assert [(f["name"], f["params"], f["description"]) for f in widget["functions"]] == [
        ("spinFast", ["speed"], "Spin fast."),
        ("map", [], "Map."),
        ("util.encode", None, "Encode (util namespace)."),
    ]
    assert widget["exports"] == ["fn", "map", "spinFast", "util"]
    assert doc == generate(copy.deepcopy(_tiny_facts()), {"adaptors": {}})


def test_generate_refuses_descriptions_of_functions_the_facts_do_not_list() -> None:
    ghosts = {"adaptors": {"@openfn/language-widget": {"functions": {"sendMail": "Sends."}}}}
    with pytest.raises(GenerationError, match="sendMail"):
        generate(_tiny_facts(), ghosts)
    with pytest.raises(GenerationError, match="language-nope"):
        generate(_tiny_facts(), {"adaptors": {"@openfn/language-nope": {}}})


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("createTaskStory", "Create task story."),
        ("getCSV", "Get CSV."),
        ("sendSMS", "Send SMS."),
        ("tracker.import", "Import (tracker namespace)."),
        ("del", "Del."),
    ],
)
def test_name_description(name: str, text: str) -> None:
    assert name_description(name) == text
