"""The page's browser libraries, from npm: ``packages/package.json`` and its committed
``package-lock.json`` pin them; ``npm ci`` installs exactly those into a cache folder
(``make serve`` and ``make test`` run ``python -m app.web.assets``), and the server
serves their files at ``/static/vendor/<package>/<path>`` (:mod:`app.api.web`). Nothing
third-party is committed, and the page still loads nothing from the internet.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.api import OpenFnRuntimeUnavailable, install_pinned

PACKAGE_DIR = Path(__file__).resolve().parent / "packages"
_REPO_ROOT = Path(__file__).resolve().parents[2]


def _default_cache_dir() -> Path:
    """``.cache/web-assets`` in a checkout; installed as a package (the Docker image), the
    user's cache folder."""
    if (_REPO_ROOT / "pyproject.toml").is_file():
        return _REPO_ROOT / ".cache" / "web-assets"
    return Path.home() / ".cache" / "planwright" / "web-assets"


DEFAULT_CACHE_DIR = _default_cache_dir()


def packages() -> tuple[str, ...]:
    """The npm packages the page may load, as ``package.json`` names them."""
    manifest = json.loads((PACKAGE_DIR / "package.json").read_text(encoding="utf-8"))
    return tuple(manifest["dependencies"])


def modules_dir(cache_dir: Path | None = None) -> Path:
    """Where the installed packages are (it may not exist yet: then nothing is served)."""
    return (cache_dir or DEFAULT_CACHE_DIR).resolve() / "node_modules"


def ensure_installed(cache_dir: Path | None = None) -> Path:
    """``npm ci`` the pinned libraries into ``cache_dir`` (idempotent); return it."""
    return install_pinned(PACKAGE_DIR, cache_dir or DEFAULT_CACHE_DIR)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m app.web.assets [CACHE_DIR]``: install the page's libraries; exit 1 with
    the reason when node or npm is missing (the service starts, its page cannot)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        print(ensure_installed(Path(args[0]) if args else None))
    except OpenFnRuntimeUnavailable as exc:
        print(f"The web page's libraries are not installed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
