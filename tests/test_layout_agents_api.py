"""``agents`` has one public surface, :mod:`agents.api`, and ``app`` imports only that."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import agents.api

ROOT = Path(__file__).resolve().parents[1]


def _agents_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """Every ``agents`` module an import in ``tree`` names (anywhere: a function's body,
    a ``TYPE_CHECKING`` block), with its line; ``from agents import x`` names
    ``agents.x``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "agents" or alias.name.startswith("agents."):
                    found.append((node.lineno, alias.name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "agents":
                found += [(node.lineno, f"agents.{alias.name}") for alias in node.names]
            elif node.module.startswith("agents."):
                found.append((node.lineno, node.module))
    return found


def test_app_imports_agents_only_through_agents_api() -> None:
    modules = sorted((ROOT / "app").rglob("*.py"))
    assert len(modules) > 50  # the walk found the package
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in modules
        for line, module in _agents_imports(ast.parse(path.read_text(), str(path)))
        if module != "agents.api"
    ]
    assert wrong == [], "app/ may import agents.api only:\n" + "\n".join(wrong)


def test_the_check_sees_every_form_of_import() -> None:
    source = (
        "import agents.runner\n"
        "from agents import runtime\n"
        "from agents.plan.graph import build_plan_graph\n"
        "from agents.api import TurnEngine\n"
        "def f():\n"
        "    from agents.usage import UsageLedger\n"
        "from . import agents\n"
    )
    assert [m for _, m in _agents_imports(ast.parse(source))] == [
        "agents.runner",
        "agents.runtime",
        "agents.plan.graph",
        "agents.api",
        "agents.usage",
    ]


def test_every_public_name_resolves_to_what_its_module_defines() -> None:
    assert agents.api.__all__, "agents.api exports nothing"
    for name in agents.api.__all__:
        module = importlib.import_module(agents.api._WHERE[name])
        assert getattr(agents.api, name) is getattr(module, name), name


def test_the_type_checkers_view_lists_the_same_names() -> None:
    """The ``TYPE_CHECKING`` imports (what mypy sees) and the lazily loaded names agree,
    each from the same module."""
    tree = ast.parse(Path(agents.api.__file__).read_text())
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )
    typed = {
        alias.asname or alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert typed == agents.api._WHERE


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        agents.api.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("agents.api.no_such_name resolved")


def test_importing_the_surface_loads_no_agents_module_behind_it() -> None:
    """Lazy: ``import agents.api`` costs nothing; a name loads its own module only."""
    probe = (
        "import sys, agents.api\n"
        "before = sorted(m for m in sys.modules if m.startswith('agents.'))\n"
        "from agents.api import mask_text\n"
        "after = sorted(m for m in sys.modules if m.startswith('agents.'))\n"
        "print(before, after)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "['agents.api'] ['agents.api', 'agents.masking']"
