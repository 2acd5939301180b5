"""Fixtures shared by the external OpenFn checks: each installs its pinned npm
packages once a session (idempotent; a missing node/npm or a failed install fails
the test, as ``pytest -m external`` is asked to run these checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.testrun.install import OpenFnRuntimeUnavailable, ensure_installed
from tests.external.openfn_harness import (
    DEFAULT_CACHE_DIR,
    OpenFnHarnessError,
    ensure_openfn_project_installed,
)


@pytest.fixture(scope="session")
def openfn_cache() -> Path:
    """The ``@openfn/project`` install (``openfn_project/``)."""
    try:
        return ensure_openfn_project_installed(DEFAULT_CACHE_DIR)
    except OpenFnHarnessError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def runtime_root() -> Path:
    """The ``@openfn/runtime`` install (``agents/testrun/node/``)."""
    try:
        return ensure_installed()
    except OpenFnRuntimeUnavailable as exc:
        pytest.fail(f"@openfn/runtime is not available: {exc}", pytrace=False)
