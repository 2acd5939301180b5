"""Generate ``tools/catalogue/data/adaptors.json`` from OpenFn's adaptor facts.

Inputs (both committed, so a clean clone regenerates the same bytes):

- ``tools/catalogue/data/adaptors.facts.json``: names, versions, exports,
  function and parameter names and namespaces of every adaptor, extracted from
  OpenFn's adaptors repository (a copy of ``shared/openfn/adaptors.facts.json``);
- ``tools/catalogue/data/descriptions.json``: our own one-line descriptions.

Every adaptor, function and parameter name comes from the facts; only
descriptions are ours. A function without a hand-written description gets one
derived from its name (``createTaskStory`` -> "Create task story."), and an
adaptor without one gets "OpenFn adaptor for <label>.". A description for a
function the facts do not list is an error, so none can outlive its function.

What a catalogue entry lists as functions:

- every documented function (``functions`` in the facts), with its parameters;
- every member of the adaptor's own namespaces (``collections.set``,
  ``http.post``) except constants (ALL_CAPS) and test hooks (names containing
  ``Mock``); the facts give no parameters for these, so ``params`` is null.

``installed`` is the version of the package that test runs install here
(``agents/testrun/node/package.json``), null for an adaptor they cannot run:
the planner's replies say so when a step uses one.

``exports`` (every top-level name the package exports, language-common's
re-exports included) and ``namespaces`` are copied as they are: the job-code
check uses them to decide which calls exist in a step's adaptor.

    python scripts/generate_catalogue.py           # write adaptors.json
    python scripts/generate_catalogue.py --check   # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = REPO_ROOT / "tools" / "catalogue" / "data"
FACTS_PATH = DATA / "adaptors.facts.json"
DESCRIPTIONS_PATH = DATA / "descriptions.json"
CATALOGUE_PATH = DATA / "adaptors.json"
RUNTIME_PACKAGE_PATH = REPO_ROOT / "agents" / "testrun" / "node" / "package.json"
SCHEMA_VERSION = 2

_CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]*$")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|[A-Z]+|\d+")


class GenerationError(Exception):
    """The inputs disagree (a description names a function the facts do not list)."""


def name_description(name: str) -> str:
    """A description derived only from a function's name: ``tracker.import`` ->
    "Import (tracker namespace)."; ``getCSV`` -> "Get CSV."."""
    namespace, _, member = name.rpartition(".")
    words = _WORDS.findall(member) or [member]
    words = [w if w.isupper() and len(w) > 1 else w.lower() for w in words]
    text = " ".join(words)
    text = text[:1].upper() + text[1:]
    return f"{text} ({namespace} namespace)." if namespace else f"{text}."


def adaptor_description(facts: dict[str, Any]) -> str:
    label = facts.get("label") or facts["name"].removeprefix("@openfn/language-")
    return f"OpenFn adaptor for {label}."


def _is_listed_member(member: str) -> bool:
    return not _CONSTANT.match(member) and "Mock" not in member


def _params(raw: Any) -> list[str]:
    # The facts write an unknown parameter list as {} (e.g. common's map).
    return list(raw) if isinstance(raw, list) else []


def catalogue_functions(facts: dict[str, Any]) -> list[tuple[str, list[str] | None]]:
    """``(name, params)`` of what the catalogue lists for one adaptor, in the facts' order
    (documented functions first, then namespace members); params None when unknown."""
    listed: list[tuple[str, list[str] | None]] = [
        (name, _params(spec.get("params"))) for name, spec in facts["functions"].items()
    ]
    for namespace, members in sorted(facts["namespaces"].items()):
        listed += [(f"{namespace}.{m}", None) for m in sorted(members) if _is_listed_member(m)]
    return listed


def generate(
    facts: dict[str, Any],
    descriptions: dict[str, Any],
    installed: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The catalogue document for ``facts`` and ``descriptions`` (pure, deterministic);
    ``installed`` maps the packages test runs install here to their versions."""
    installed = installed or {}
    by_name = {a["name"]: a for a in facts["adaptors"]}
    ours = descriptions.get("adaptors", {})
    unknown = sorted(set(ours) - set(by_name))
    if unknown:
        raise GenerationError(f"descriptions for adaptors the facts do not list: {unknown}")
    adaptors = []
    for name in sorted(by_name):
        adaptor = by_name[name]
        mine = ours.get(name, {})
        functions = catalogue_functions(adaptor)
        names = {fn for fn, _ in functions}
        ghosts = sorted(set(mine.get("functions", {})) - names)
        if ghosts:
            raise GenerationError(f"{name}: descriptions for functions it does not have: {ghosts}")
        adaptors.append(
            {
                "name": name,
                "label": adaptor.get("label"),
                "version": adaptor["version"],
                "installed": installed.get(name),
                "description": mine.get("description") or adaptor_description(adaptor),
                "functions": [
                    {
                        "name": fn,
                        "params": params,
                        "description": mine.get("functions", {}).get(fn) or name_description(fn),
                    }
                    for fn, params in functions
                ],
                "exports": sorted(adaptor["exports"]),
                "namespaces": {ns: sorted(m) for ns, m in sorted(adaptor["namespaces"].items())},
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "facts": {key: facts.get(key) for key in ("source", "commit", "date")},
        "adaptors": adaptors,
    }


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def installed_adaptors(package_path: Path = RUNTIME_PACKAGE_PATH) -> dict[str, str]:
    """The adaptor packages (and versions) the test-run runtime installs here."""
    dependencies = json.loads(package_path.read_text(encoding="utf-8"))["dependencies"]
    return {
        name: version
        for name, version in dependencies.items()
        if name.startswith("@openfn/language-")
    }


def generated_text(
    facts_path: Path = FACTS_PATH,
    descriptions_path: Path = DESCRIPTIONS_PATH,
    package_path: Path = RUNTIME_PACKAGE_PATH,
) -> str:
    facts = json.loads(facts_path.read_text(encoding="utf-8"))
    descriptions = json.loads(descriptions_path.read_text(encoding="utf-8"))
    return render(generate(facts, descriptions, installed_adaptors(package_path)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if adaptors.json is stale")
    args = parser.parse_args(argv)
    try:
        text = generated_text()
    except GenerationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        current = CATALOGUE_PATH.read_text(encoding="utf-8") if CATALOGUE_PATH.exists() else ""
        if current != text:
            print(f"{CATALOGUE_PATH} is stale: run scripts/generate_catalogue.py", file=sys.stderr)
            return 1
        return 0
    CATALOGUE_PATH.write_text(text, encoding="utf-8")
    document = json.loads(text)
    count = sum(len(a["functions"]) for a in document["adaptors"])
    print(f"wrote {CATALOGUE_PATH}: {len(document['adaptors'])} adaptors, {count} functions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
