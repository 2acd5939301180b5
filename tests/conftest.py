"""Suite-wide fixtures.

The network guard (tests/network_guard.py) fails any test that tries to reach a
host other than this machine; every test gets a tier marker from its folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import network_guard

pytest_plugins = ["tests.fakes.fixtures", "tests.databases"]


@pytest.fixture(autouse=True, scope="session")
def _network_guard() -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    network_guard.install(mp)
    yield
    mp.undo()


# --- Test tiers ---------------------------------------------------------------
# Every test gets one tier marker from the folder it lives in (the first folder
# under tests/), so `pytest -m unit`, `-m service`, `-m e2e`, ... select a tier.
# Old and new folder names are both listed; an unknown folder is "unit".
_TIER_BY_FOLDER = {
    "unit": "unit",
    "tools": "unit",
    "agents": "unit",
    "client": "unit",
    "app": "unit",
    "fakes": "unit",
    "store": "service",
    "bus": "service",
    "service": "service",
    "property": "property",
    "evals": "evals",
    "e2e": "e2e",
    "integration": "integration",
    "faults": "faults",
    "external": "external",
}
_TIERS = frozenset(_TIER_BY_FOLDER.values())
# Folders (at any depth) and parametrize values that mean "needs Redis/Postgres".
_SERVICE_FOLDERS = frozenset({"store", "bus", "service"})
_SERVICE_PARAMS = frozenset({"postgres", "redis"})
_TESTS_DIR = Path(__file__).resolve().parent


def _tier(item: pytest.Item) -> str:
    try:
        parts = Path(str(item.path)).resolve().relative_to(_TESTS_DIR).parts[:-1]
    except ValueError:
        return "unit"
    tier = _TIER_BY_FOLDER.get(parts[0], "unit") if parts else "unit"
    if tier == "unit":
        callspec = getattr(item, "callspec", None)
        params = callspec.params.values() if callspec is not None else ()
        if (
            _SERVICE_FOLDERS.intersection(parts)
            or "postgres_url" in getattr(item, "fixturenames", ())
            or any(isinstance(p, str) and p in _SERVICE_PARAMS for p in params)
        ):
            tier = "service"
    return tier


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if not any(item.get_closest_marker(name) for name in _TIERS):
            item.add_marker(_tier(item))
