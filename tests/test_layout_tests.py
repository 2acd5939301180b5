"""The layout rules of the test suite itself.

A test module is a leaf: shared helpers live in ``helpers.py`` modules (or fakes, or data
files under ``tests/fixtures/``), never in another ``test_*.py``, and a ``conftest.py`` holds
fixtures only, so nothing imports one as a module. Importing from a test module collects its
tests twice over and ties two unrelated files together; importing from a conftest makes a
fixture file a library. Every test is also bounded in time (pytest-timeout's ``timeout``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Modules outside tests/ that may reuse test helpers (benches drive the same fakes).
IMPORTERS = ("tests", "bench")


def _is_test_or_conftest(module: str) -> bool:
    """Whether a dotted ``tests.`` module names a test module or a conftest on disk."""
    path = ROOT.joinpath(*module.split("."))
    if path.is_dir():
        return False
    name = path.name
    return name == "conftest" or name.startswith("test_")


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            # ``from tests.pkg import test_mod`` imports a module by its name.
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return [(line, m) for line, m in found if m == "tests" or m.startswith("tests.")]


def _offenders() -> list[str]:
    offenders = []
    for top in IMPORTERS:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for line, module in _imported_modules(path):
                if _is_test_or_conftest(module):
                    offenders.append(f"{rel}:{line} imports {module}")
    return offenders


def test_nothing_imports_a_test_module_or_a_conftest() -> None:
    assert _offenders() == []


def test_the_rule_sees_a_test_module_a_conftest_and_a_helper() -> None:
    assert _is_test_or_conftest("tests.app.service.test_ws_chat")
    assert _is_test_or_conftest("tests.integration.conftest")
    assert not _is_test_or_conftest("tests.app.service.helpers")
    assert not _is_test_or_conftest("tests.app.service")


def test_every_test_is_bounded_in_time(pytestconfig: pytest.Config) -> None:
    """pytest-timeout is loaded and its ini bound applies to the whole suite; no test lifts it."""
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert 0 < float(pytestconfig.getini("timeout")) <= 300
    lifted = [
        f"{path.relative_to(ROOT).as_posix()}:{node.lineno}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call)
        and ast.unparse(node.func).endswith("mark.timeout")
        and any(isinstance(a, ast.Constant) and not a.value for a in node.args)
    ]
    assert lifted == []
