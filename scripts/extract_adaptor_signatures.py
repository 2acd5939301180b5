"""Extract function signatures from installed OpenFn adaptor packages.

Reads each package's ``ast.json`` (or its ``types/*.d.ts`` JSDoc when the
ast is empty) under a cache folder and prints, or merges into
``tools/catalogue/data/adaptors.json``, the facts the catalogue needs: package version,
function names and parameter names. Descriptions are never taken from the
packages: existing hand-written descriptions are kept, and a function new to
the catalogue gets a ``TODO`` placeholder to be written by hand.

    python scripts/extract_adaptor_signatures.py --install          # fetch, then print
    python scripts/extract_adaptor_signatures.py --write            # merge into the catalogue
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tools.catalogue.adaptor_docs import (  # noqa: E402
    REACHABLE_PACKAGES,
    find_packages,
    install_adaptor_docs,
    package_docs_dir_default,
    parse_ast,
    read_package_docs,
)

DEFAULT_CATALOGUE = REPO_ROOT / "tools" / "catalogue" / "data" / "adaptors.json"
TODO = "TODO: describe"


def extract_signatures(ast: object) -> list[dict[str, Any]]:
    """``[{name, params}]`` for every public function an ``ast.json`` document lists."""
    return [{"name": fn.name, "params": list(fn.params)} for fn in parse_ast(ast)]


def extract_package(package_dir: Path) -> dict[str, Any]:
    docs = read_package_docs(package_dir)
    return {
        "name": docs.name,
        "version": docs.version,
        "functions": [{"name": f.name, "params": list(f.params)} for f in docs.functions],
    }


def merge_into_catalogue(
    catalogue: dict[str, Any], extracted: list[dict[str, Any]], *, prune: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """Merge extracted facts into catalogue data; return the new data and what needs writing.

    Versions and parameter lists come from the package. Hand-written
    descriptions are kept. Functions the catalogue lists but the package does
    not (e.g. namespaced helpers like ``dateFns.format``) are kept unless
    ``prune``.
    """
    by_name = {a["name"]: a for a in copy.deepcopy(catalogue.get("adaptors", []))}
    todo: list[str] = []
    for package in extracted:
        current = by_name.get(package["name"])
        if current is None:
            current = {"name": package["name"], "description": TODO, "functions": []}
            by_name[package["name"]] = current
            todo.append(package["name"])
        existing = {f["name"]: f for f in current.get("functions", [])}
        merged = []
        for fn in package["functions"]:
            old = existing.pop(fn["name"], None)
            description = old["description"] if old else TODO
            if description == TODO:
                todo.append(f"{package['name']} {fn['name']}")
            merged.append({"name": fn["name"], "params": fn["params"], "description": description})
        if not prune:
            merged.extend(existing.values())
        current["version"] = package["version"]
        current["source"] = "package"
        current["functions"] = merged
    adaptors = [
        {
            key: a[key]
            for key in ("name", "version", "source", "description", "functions")
            if key in a
        }
        for a in sorted(by_name.values(), key=lambda a: a["name"])
    ]
    return {**catalogue, "adaptors": adaptors}, todo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=package_docs_dir_default())
    parser.add_argument("--install", action="store_true", help="fetch the packages with npm first")
    parser.add_argument("--catalogue", type=Path, default=DEFAULT_CATALOGUE)
    parser.add_argument("--write", action="store_true", help="merge into the catalogue file")
    parser.add_argument("--prune", action="store_true", help="drop functions not in the package")
    args = parser.parse_args(argv)

    if args.install:
        for line in install_adaptor_docs(args.cache_dir, REACHABLE_PACKAGES):
            print(f"installed {line}", file=sys.stderr)
    packages = find_packages(args.cache_dir)
    if not packages:
        print(f"no adaptor packages under {args.cache_dir} (try --install)", file=sys.stderr)
        return 1
    extracted = [extract_package(p) for p in packages]
    if not args.write:
        json.dump(extracted, sys.stdout, indent=2)
        print()
        return 0
    catalogue = json.loads(args.catalogue.read_text(encoding="utf-8"))
    merged, todo = merge_into_catalogue(catalogue, extracted, prune=args.prune)
    args.catalogue.write_text(json.dumps(merged, indent=2, ensure_ascii=False) + "\n", "utf-8")
    for item in todo:
        print(f"needs a description: {item}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
