"""Locally installed OpenFn adaptor packages: fetching them and reading their docs.

The published adaptor packages ship an ``ast.json`` with every operation's
name, parameters and JSDoc (description, parameter notes, examples). Planwright
never commits that text: it is fetched into a cache folder on demand
(``planwright adaptor-docs install``) and read at index-build time.

Layout of the cache folder (the same one ``npm install --prefix`` produces)::

    <cache_dir>/node_modules/@openfn/language-http/{package.json,ast.json,types/...}

Some packages ship an empty ``ast.json`` (``@openfn/language-collections``
does); for those the JSDoc in ``types/*.d.ts`` is read instead
(:mod:`tools.catalogue.dts_docs`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.errors import PlanwrightError

REACHABLE_PACKAGES: tuple[str, ...] = (
    "@openfn/language-common",
    "@openfn/language-http",
    "@openfn/language-fhir",
    "@openfn/language-mssql",
    "@openfn/language-openmrs",
    "@openfn/language-collections",
)

_REPO_ROOT = Path(__file__).resolve().parents[2]


class AdaptorDocsError(PlanwrightError):
    """Adaptor packages could not be fetched or read."""

    code = "adaptor_docs_failed"


@dataclass(frozen=True)
class PackageFunction:
    """One documented function of an installed adaptor package."""

    name: str
    params: tuple[str, ...]
    description: str = ""
    param_docs: tuple[tuple[str, str], ...] = ()
    examples: tuple[str, ...] = ()

    @property
    def signature(self) -> str:
        return f"{self.name}({', '.join(self.params)})"

    def doc_text(self) -> str:
        """The function's documentation as plain text (for the search index)."""
        parts = [self.signature]
        if self.description:
            parts.append(self.description)
        parts.extend(f"{name}: {text}" for name, text in self.param_docs if text)
        parts.extend(f"Example: {example}" for example in self.examples)
        return "\n".join(parts)


@dataclass(frozen=True)
class PackageDocs:
    name: str
    version: str
    functions: tuple[PackageFunction, ...]


def package_docs_dir_default(override: str | Path | None = None) -> Path:
    """The adaptor docs cache folder: ``override`` when given, else ``.cache/adaptors``.

    Callers pass ``PLANWRIGHT_ADAPTOR_DOCS_DIR`` (from settings) as ``override``;
    this module reads no environment variables.
    """
    if override is not None and str(override).strip():
        return Path(override).expanduser()
    return _REPO_ROOT / ".cache" / "adaptors"


# --------------------------------------------------------------------------- ast.json


def _tags(docs: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    tags = docs.get("tags")
    return [t for t in tags if isinstance(t, Mapping)] if isinstance(tags, list) else []


def _clean(text: object) -> str:
    return text.strip() if isinstance(text, str) else ""


def _function_from_ast(entry: Mapping[str, Any]) -> PackageFunction | None:
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        return None
    docs = entry.get("docs")
    docs = docs if isinstance(docs, Mapping) else {}
    tags = _tags(docs)
    if any(t.get("title") == "private" for t in tags):
        return None
    param_tags = [
        (t["name"], _clean(t.get("description")))
        for t in tags
        if t.get("title") == "param" and isinstance(t.get("name"), str)
    ]
    raw_params = entry.get("params")
    if isinstance(raw_params, list) and all(isinstance(p, str) for p in raw_params):
        params = tuple(raw_params)
    else:
        # Some entries carry ``"params": {}``; fall back to the top-level @param tags.
        params = tuple(n for n, _ in param_tags if "." not in n)
    examples = []
    for tag in tags:
        if tag.get("title") != "example":
            continue
        code = _clean(tag.get("description"))
        caption = _clean(tag.get("caption"))
        if code:
            examples.append(f"{caption}\n{code}" if caption else code)
    return PackageFunction(
        name=name,
        params=params,
        description=_clean(docs.get("description")),
        param_docs=tuple(param_tags),
        examples=tuple(examples),
    )


def parse_ast(data: object) -> list[PackageFunction]:
    """The public functions an adaptor's ``ast.json`` documents, in file order.

    Reads ``operations`` then ``exports`` (``common`` lists the functions
    re-exported from language-common, which belong to that package). Entries
    tagged ``@private`` and malformed entries are skipped.
    """
    if not isinstance(data, Mapping):
        raise AdaptorDocsError("ast.json must contain a JSON object")
    seen: set[str] = set()
    functions: list[PackageFunction] = []
    for section in ("operations", "exports"):
        entries = data.get(section)
        if not isinstance(entries, list):
            continue
        for entry in entries:
            fn = _function_from_ast(entry) if isinstance(entry, Mapping) else None
            if fn is not None and fn.name not in seen:
                seen.add(fn.name)
                functions.append(fn)
    return functions


# --------------------------------------------------------------------------- packages


def find_packages(cache_dir: Path) -> list[Path]:
    """Installed ``@openfn/language-*`` package folders under ``cache_dir``, sorted."""
    scope = cache_dir / "node_modules" / "@openfn"
    if not scope.is_dir():
        return []
    return sorted(
        p
        for p in scope.iterdir()
        if p.name.startswith("language-") and (p / "package.json").is_file()
    )


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AdaptorDocsError(f"cannot read {path}: {exc}") from exc


def read_package_docs(package_dir: Path) -> PackageDocs:
    """Name, version and documented functions of one installed adaptor package."""
    meta = _read_json(package_dir / "package.json")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
        raise AdaptorDocsError(f"{package_dir / 'package.json'} has no package name")
    version = meta.get("version")
    functions: list[PackageFunction] = []
    ast_path = package_dir / "ast.json"
    if ast_path.is_file():
        functions = parse_ast(_read_json(ast_path))
    if not functions:
        from tools.catalogue import dts_docs  # it builds on PackageFunction, defined here

        seen: set[str] = set()
        for dts in sorted((package_dir / "types").glob("*.d.ts")):
            for fn in dts_docs.parse_dts(dts.read_text(encoding="utf-8", errors="replace")):
                if fn.name not in seen:
                    seen.add(fn.name)
                    functions.append(fn)
    return PackageDocs(
        name=meta["name"],
        version=version if isinstance(version, str) else "",
        functions=tuple(functions),
    )


def read_all_package_docs(cache_dir: Path) -> list[PackageDocs]:
    """Docs of every package installed under ``cache_dir`` (unreadable ones are skipped)."""
    docs = []
    for package_dir in find_packages(cache_dir):
        try:
            docs.append(read_package_docs(package_dir))
        except AdaptorDocsError:
            continue
    return docs


def _run_npm(npm: str, args: list[str], *, cwd: Path, timeout: float) -> str:
    try:
        proc = subprocess.run(
            [npm, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AdaptorDocsError(f"npm {args[0]} failed: {exc}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise AdaptorDocsError(
            f"npm {args[0]} failed (exit {proc.returncode}): " + " | ".join(tail)
        )
    return proc.stdout


def _safe_extract(tarball: Path, dest: Path) -> None:
    """Unpack a package tarball, refusing links and paths that leave ``dest``."""
    try:
        with tarfile.open(tarball, "r:gz") as archive:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4
                archive.extractall(dest, filter="data")
                return
            root = dest.resolve()
            for member in archive.getmembers():
                target = (dest / member.name).resolve()
                if not (member.isfile() or member.isdir()) or not target.is_relative_to(root):
                    raise tarfile.TarError(f"unsafe entry {member.name!r}")
            archive.extractall(dest)  # every member was checked above
    except (tarfile.TarError, OSError) as exc:
        raise AdaptorDocsError(f"cannot unpack {tarball.name}: {exc}") from exc


def install_adaptor_docs(
    cache_dir: Path,
    packages: Iterable[str] = REACHABLE_PACKAGES,
    *,
    npm: str | None = None,
    timeout: float = 300.0,
) -> list[str]:
    """Fetch adaptor packages into ``cache_dir/node_modules``; return ``name@version`` of each.

    Uses ``npm pack`` and unpacks each tarball in place rather than
    ``npm install``: only the package's own files (``ast.json``, ``types/``)
    are needed, no dependency tree is resolved (some published adaptors pin a
    language-common version the registry does not serve, which makes
    ``npm install`` fail), and no install scripts run. The resulting layout is
    the one ``npm install --prefix <cache_dir>`` creates.
    """
    npm_path = npm or shutil.which("npm")
    if not npm_path:
        raise AdaptorDocsError(
            "npm is not installed (needed to fetch adaptor docs); install Node.js"
        )
    names = list(packages)
    for name in names:
        if not re.fullmatch(r"@openfn/language-[a-z0-9][a-z0-9-]*", name):
            raise AdaptorDocsError(f"not an OpenFn adaptor package name: {name!r}")
    scope = cache_dir / "node_modules" / "@openfn"
    scope.mkdir(parents=True, exist_ok=True)
    installed = []
    with tempfile.TemporaryDirectory(prefix="planwright-npm-") as tmp:
        tmp_dir = Path(tmp)
        for name in names:
            out = _run_npm(npm_path, ["pack", name, "--json"], cwd=tmp_dir, timeout=timeout)
            try:
                info = json.loads(out)[0]
                tarball = tmp_dir / info["filename"]
            except (ValueError, LookupError, TypeError) as exc:
                raise AdaptorDocsError(f"unexpected npm pack output for {name}") from exc
            target = scope / name.split("/", 1)[1]
            staging = Path(tempfile.mkdtemp(prefix="unpack-", dir=tmp_dir))
            _safe_extract(tarball, staging)
            if target.exists():
                shutil.rmtree(target)
            shutil.move(str(staging / "package"), target)
            installed.append(f"{name}@{info.get('version', '')}")
    return installed
