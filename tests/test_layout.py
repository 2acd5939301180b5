"""The layout rules of DESIGN §8, checked on the source: arrows point down, modules stay
small, and nothing outside the registry and the tool modules compares tool names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agents.nodes.route import ROUTE
from tools.registry import CODE_EDIT_TOOL, TOOLS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "agents", "tools", "prompts", "evals")
# "route" is also the route event's type and a spec kind, so comparing with it says nothing
# about tool names; the router itself compares with ``ROUTE.name``.
TOOL_NAMES = {*TOOLS, CODE_EDIT_TOOL.name} - {ROUTE.name}
# Generated data and migrations are not hand-written modules.
NOT_MODULES = ("app/store/migrations/",)


def _modules(package: str) -> list[Path]:
    return [
        p
        for p in sorted((ROOT / package).rglob("*.py"))
        if not any(str(p.relative_to(ROOT)).startswith(skip) for skip in NOT_MODULES)
    ]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("tools", {"agents", "app", "evals", "prompts"}),
        ("prompts", {"agents", "app", "evals"}),
        ("agents", {"app", "evals"}),
        ("evals", {"app"}),
    ],
)
def test_arrows_point_down(package: str, forbidden: set[str]) -> None:
    offenders = {
        str(p.relative_to(ROOT)): sorted(_imports(p) & forbidden)
        for p in _modules(package)
        if _imports(p) & forbidden
    }
    assert offenders == {}


def test_app_imports_evals_only_lazily_from_the_cli() -> None:
    """The server never imports evals; the `planwright` command loads eval commands lazily."""
    offenders = []
    for path in _modules("app"):
        tree = ast.parse(path.read_text())
        for node in tree.body:  # module level only: a lazy import lives inside a function
            if isinstance(node, ast.ImportFrom | ast.Import):
                names = (
                    [node.module]
                    if isinstance(node, ast.ImportFrom)
                    else [a.name for a in node.names]
                )
                if any((n or "").split(".")[0] == "evals" for n in names):
                    offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_the_terminal_client_reaches_the_server_over_the_wire_only() -> None:
    offenders = {
        str(p.relative_to(ROOT)): sorted(
            m
            for m in _module_imports(p)
            if m.startswith(("agents", "evals", "app.")) and not m.startswith("app.client")
        )
        for p in sorted((ROOT / "app" / "client").rglob("*.py"))
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def _module_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_production_module_is_over_400_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for package in PACKAGES
        for p in _modules(package)
        if (n := len(p.read_text().splitlines())) > 400
    }
    assert long == {}


def _names_compared(tree: ast.AST) -> list[tuple[int, str]]:
    hits: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for operand in [node.left, *node.comparators]:
            values = (
                [e for e in operand.elts]
                if isinstance(operand, ast.Tuple | ast.List | ast.Set)
                else [operand]
            )
            for value in values:
                if isinstance(value, ast.Constant) and value.value in TOOL_NAMES:
                    hits.append((node.lineno, value.value))
    return hits


def test_nothing_outside_the_registry_compares_tool_names() -> None:
    allowed = {ROOT / "tools" / "registry.py", *(ROOT / "tools" / "edits").glob("*.py")}
    offenders = {
        str(p.relative_to(ROOT)): hits
        for package in PACKAGES
        for p in _modules(package)
        if p not in allowed and (hits := _names_compared(ast.parse(p.read_text())))
    }
    assert offenders == {}


def test_the_name_check_finds_a_comparison() -> None:
    """The check above can fail: it sees both spellings of a name comparison."""
    tree = ast.parse('if name == "remove_jobs" or name in ("add_jobs", "x"): pass')
    assert [n for _, n in _names_compared(tree)] == ["remove_jobs", "add_jobs"]
