"""The static web page (no build step): ``index.html``, ES modules in ``js/``,
``styles.css`` and vendored libraries in ``vendor/`` with their licences.

Served by :mod:`app.api.web` at ``/`` and ``/static/``.
"""

from __future__ import annotations

from pathlib import Path

WEB_DIR = Path(__file__).resolve().parent
INDEX_HTML = WEB_DIR / "index.html"
