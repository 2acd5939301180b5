"""The network guard: a test that tries to reach a host other than this machine fails.

Planwright's tests run against local fakes (a fake Messages API, a stub Langfuse endpoint,
local Redis/Postgres), never a real external service. ``tests/conftest.py`` installs it
for the whole session.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

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


def install(mp: pytest.MonkeyPatch) -> None:
    """Guard ``connect``, ``connect_ex`` and ``getaddrinfo`` until ``mp`` is undone."""
    mp.setattr(socket.socket, "connect", _guarded_connect)
    mp.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    mp.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
