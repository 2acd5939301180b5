import socket

import pytest

from tests.network_guard import ExternalNetworkError


def test_external_host_is_refused() -> None:
    with pytest.raises(ExternalNetworkError):
        socket.create_connection(("203.0.113.7", 443), timeout=1)


def test_external_name_is_not_resolved() -> None:
    with pytest.raises(ExternalNetworkError):
        socket.getaddrinfo("api.anthropic.com", 443)


def test_loopback_is_allowed() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        client = socket.create_connection(server.getsockname(), timeout=1)
        client.close()
    finally:
        server.close()
