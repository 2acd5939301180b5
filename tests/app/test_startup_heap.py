"""Start-up leaves its long-lived objects frozen, out of the collector's full passes."""

from __future__ import annotations

import gc
from pathlib import Path

from fastapi.testclient import TestClient

from app.main import create_app
from tests.app.service.conftest import make_settings


class _Probe:
    """Built before start-up and alive throughout, as the catalogue and models are."""


def test_what_start_up_built_is_frozen(tmp_path: Path) -> None:
    probe = _Probe()
    gc.unfreeze()  # whatever earlier tests froze: start-up must freeze it again
    app = create_app(make_settings(tmp_path, tokens=None))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/healthz").status_code == 200
        # A full collection walks gc.get_objects(); the frozen heap is not in it.
        assert all(obj is not probe for obj in gc.get_objects())
        assert gc.get_freeze_count() > 0  # counts only what this start-up froze
