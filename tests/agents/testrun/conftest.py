"""The runner's tests run workflows in the real pinned ``@openfn/runtime`` (real node)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.testrun import LocalRunner, OpenFnRuntimeUnavailable, RunLimits, ensure_installed


@pytest.fixture(scope="session")
def runtime_dir() -> Path:
    """The pinned runtime, installed once (a missing node/npm fails, never skips)."""
    try:
        return ensure_installed()
    except OpenFnRuntimeUnavailable as exc:
        pytest.fail(f"@openfn/runtime is not available: {exc}", pytrace=False)


@pytest.fixture
def runner(runtime_dir: Path) -> LocalRunner:
    return LocalRunner(RunLimits(timeout_s=20), runtime_dir)
