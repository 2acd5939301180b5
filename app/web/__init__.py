"""The static web page (no build step): ``index.html``, ES modules in ``js/``,
``styles.css``; its npm libraries come from ``packages/`` (:mod:`app.web.assets`).

Served by :mod:`app.api.web` at ``/`` and ``/static/``.
"""

from __future__ import annotations

from pathlib import Path

WEB_DIR = Path(__file__).resolve().parent
INDEX_HTML = WEB_DIR / "index.html"
