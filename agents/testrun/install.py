"""Install the pinned ``@openfn/runtime`` and adaptors (``agents/testrun/node/``).

``package.json`` and the committed ``package-lock.json`` pin every npm package;
``npm ci`` installs exactly those into a cache folder, next to copies of the
node scripts (``run.mjs``, ``compile.mjs``, ``guard.mjs``), so bare imports
resolve from there. ``scripts/ensure-test-services.sh`` calls
:func:`ensure_installed` so ``make test`` installs it on a clean machine; the
external tests and the eval runtime grader call it too (a stamp makes repeat
calls two file reads).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from tools.errors import PlanwrightError

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(__file__).resolve().parent / "node"


def _default_cache_dir() -> Path:
    """``.cache/openfn-runtime`` in a checkout (``make serve``, ``make test``); installed as
    a package (the Docker image), the user's cache folder, which ``python -m
    agents.testrun.install`` fills the same way."""
    if (REPO_ROOT / "pyproject.toml").is_file():
        return REPO_ROOT / ".cache" / "openfn-runtime"
    return Path.home() / ".cache" / "planwright" / "openfn-runtime"


DEFAULT_CACHE_DIR = _default_cache_dir()
SCRIPTS = ("run.mjs", "compile.mjs", "guard.mjs", "intercept.mjs")
_INSTALL_FILES = ("package.json", "package-lock.json")
_STAMP = ".planwright-installed"
_NPM_TIMEOUT_S = 900


class OpenFnRuntimeUnavailable(PlanwrightError):
    """node or npm is missing, or the pinned packages could not be installed."""

    code = "openfn_runtime_unavailable"


def pinned(package_dir: Path = PACKAGE_DIR) -> dict[str, str]:
    """npm package -> exact version, as ``package.json`` pins them."""
    manifest = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
    return dict(manifest["dependencies"])


def node_path() -> str:
    found = shutil.which("node")
    if found is None:
        raise OpenFnRuntimeUnavailable(
            "`node` is not on PATH: running workflows in @openfn/runtime needs Node.js >= 20"
        )
    return found


def _fingerprint(package_dir: Path) -> str:
    digest = hashlib.sha256()
    for name in _INSTALL_FILES:
        digest.update(name.encode())
        digest.update((package_dir / name).read_bytes())
    return digest.hexdigest()


def _installed_versions(package_dir: Path, cache_dir: Path) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in pinned(package_dir):
        try:
            manifest = cache_dir / "node_modules" / name / "package.json"
            found[name] = json.loads(manifest.read_text(encoding="utf-8"))["version"]
        except (OSError, ValueError, KeyError):
            found[name] = None
    return found


def _is_installed(package_dir: Path, cache_dir: Path, fingerprint: str) -> bool:
    stamp = cache_dir / _STAMP
    return (
        stamp.is_file()
        and stamp.read_text(encoding="utf-8").strip() == fingerprint
        and _installed_versions(package_dir, cache_dir) == pinned(package_dir)
    )


@contextlib.contextmanager
def _locked(cache_dir: Path) -> Iterator[None]:
    """Serialise installs across processes (parallel test workers, an eval run)."""
    with open(cache_dir / ".install.lock", "w", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _copy_scripts(package_dir: Path, cache_dir: Path, scripts: Sequence[str]) -> None:
    for name in scripts:
        source = (package_dir / name).read_bytes()
        target = cache_dir / name
        if target.is_file() and target.read_bytes() == source:
            continue
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=f".{name}-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(source)
        os.replace(tmp, target)


def _npm_ci(cache_dir: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise OpenFnRuntimeUnavailable("`npm` is not on PATH: it installs the pinned packages")
    command = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(
            command,
            cwd=cache_dir,
            capture_output=True,
            text=True,
            timeout=_NPM_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise OpenFnRuntimeUnavailable(
            f"`npm ci` in {cache_dir} took over {_NPM_TIMEOUT_S}s"
        ) from exc
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-30:])
        raise OpenFnRuntimeUnavailable(
            f"`npm ci` failed in {cache_dir} (exit {done.returncode}); is the npm registry "
            f"reachable?\n{tail}"
        )


def install_pinned(package_dir: Path, cache_dir: Path, scripts: Sequence[str] = ()) -> Path:
    """Install ``package_dir``'s pinned npm packages into ``cache_dir`` with ``npm ci``
    (idempotent: a stamp of package.json + package-lock.json and the installed versions
    short-circuits repeat calls), copy ``scripts`` next to ``node_modules`` so their
    bare imports resolve, and return ``cache_dir``. Shared by the runtime and the
    ``@openfn/project`` checks."""
    node_path()
    cache_dir = cache_dir.resolve()
    cache_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = _fingerprint(package_dir)
    if not _is_installed(package_dir, cache_dir, fingerprint):
        with _locked(cache_dir):
            if not _is_installed(package_dir, cache_dir, fingerprint):  # another process won
                (cache_dir / _STAMP).unlink(missing_ok=True)
                for name in _INSTALL_FILES:
                    shutil.copyfile(package_dir / name, cache_dir / name)
                _npm_ci(cache_dir)
                versions = _installed_versions(package_dir, cache_dir)
                if versions != pinned(package_dir):
                    raise OpenFnRuntimeUnavailable(
                        f"npm ci installed {versions}, expected {pinned(package_dir)}"
                    )
                (cache_dir / _STAMP).write_text(fingerprint + "\n", encoding="utf-8")
    _copy_scripts(package_dir, cache_dir, scripts)
    return cache_dir


def ensure_installed(cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """Install the pinned runtime packages into ``cache_dir`` (idempotent); return it."""
    return install_pinned(PACKAGE_DIR, cache_dir, SCRIPTS)


def is_ready(cache_dir: Path = DEFAULT_CACHE_DIR) -> bool:
    """The pinned packages and the current node scripts are in ``cache_dir`` (no install,
    no npm: what a run checks before it starts node)."""
    cache_dir = cache_dir.resolve()
    try:
        if not _is_installed(PACKAGE_DIR, cache_dir, _fingerprint(PACKAGE_DIR)):
            return False
        _copy_scripts(PACKAGE_DIR, cache_dir, SCRIPTS)  # cheap when they are current
    except OSError:
        return False
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agents.testrun.install [CACHE_DIR]``: install the runtime (``make serve``,
    the Dockerfile, ``scripts/ensure-test-services.sh``); exit 1 with the reason when it
    cannot (the service still starts; its test runs answer ``openfn_runtime_unavailable``)."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    target = Path(args[0]) if args else DEFAULT_CACHE_DIR
    try:
        print(ensure_installed(target))
    except OpenFnRuntimeUnavailable as exc:
        print(
            f"OpenFn runtime not installed ({exc.message}); test runs are unavailable.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
