"""Suite-wide fixtures.

The network guard fails any test that tries to reach a host other than this
machine: Planwright's tests run against local fakes (a fake Messages API, a
stub Langfuse endpoint, local Redis/Postgres), never a real external service.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["tests.fakes.fixtures", "tests.databases"]

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


class ExternalNetworkError(AssertionError):
    """Raised when a test tries to reach a non-local host."""


def _is_local_host(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in _LOCAL_NAMES or host == "":
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _check_address(address: Any) -> None:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if not _is_local_host(host):
        raise ExternalNetworkError(f"test tried to reach external host {host!r}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check_address(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check_address(address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if name is not None and not _is_local_host(name):
        raise ExternalNetworkError(f"test tried to resolve external host {name!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True, scope="session")
def _network_guard() -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    mp.setattr(socket.socket, "connect", _guarded_connect)
    mp.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    mp.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
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
