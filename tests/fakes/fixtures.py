"""Pytest fixtures around :class:`FakeAnthropicServer`.

Register this module as a plugin, either once for the suite in the root
``tests/conftest.py`` or per test module::

    pytest_plugins = ["tests.fakes.fixtures"]

then take ``fake_anthropic`` (or ``fake_anthropic_env``) as a test argument.
Importing the fixture functions by name also works but needs
``# noqa: F401, F811`` on the import *and* every test that uses them (ruff
treats the argument as a redefinition), so the plugin line is preferred.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer

__all__ = ["fake_anthropic", "fake_anthropic_env"]


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropicServer]:
    """A running fake Messages API on 127.0.0.1:<free port>, stopped after the test."""
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def fake_anthropic_env(
    fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> FakeAnthropicServer:
    """``fake_anthropic`` plus ``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY`` pointing at it.

    For code that builds its own client from the environment (``anthropic.Anthropic()``).
    """
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    return fake_anthropic
