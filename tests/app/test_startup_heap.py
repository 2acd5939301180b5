"""Start-up leaves its long-lived objects frozen, out of the collector's full passes."""

from __future__ import annotations

import gc
import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app import main
from app.main import create_app
from tests.app.service.helpers import make_settings
from tests.waiting import wait_until


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


def test_the_service_tidies_what_freezing_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A PUT's job freezes what is alive meanwhile; the service's periodic tidy gives
    back the part of it that became garbage (``gc_tidy_interval_s``)."""
    settings = make_settings(tmp_path, tokens=None).model_copy(update={"gc_tidy_interval_s": 0.05})
    app = create_app(settings)
    caplog.set_level(logging.INFO, logger="app.offload")
    with TestClient(app, base_url="http://127.0.0.1") as client:
        created = client.post("/v1/workflows", json={"yaml": "name: Tidy\n"})
        assert created.status_code == 201, created.text
        wait_until(
            lambda: any("heap tidy" in r.getMessage() for r in caplog.records),
            timeout=5,
            message="no tidy after a job froze objects",
        )


def test_no_tidy_when_it_is_switched_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[float] = []

    async def recording(interval_s: float) -> None:
        started.append(interval_s)

    monkeypatch.setattr(main, "tidy_periodically", recording)
    for interval in (0.0, 7.0):
        settings = make_settings(tmp_path, tokens=None).model_copy(
            update={"gc_tidy_interval_s": interval}
        )
        with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
            assert client.get("/healthz").status_code == 200
    assert started == [7.0], "0 starts no tidying; any other interval starts it"
