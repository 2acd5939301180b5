"""The offline model's room (issue 25): ``agents/offline`` is reached through the model
factory only; the eval grader reads its word list and nothing else; ``app`` never sees it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OFFLINE = "agents.offline"
WORDS = "agents.offline.words"
FACTORY = "agents/models/factory.py"
SOURCES = ("agents", "app", "evals", "tools", "prompts", "bench", "scripts")


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports, by its full dotted name (``from agents import offline``
    counts as ``agents.offline``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(
                f"{node.module}.{alias.name}"
                for alias in node.names
                if _is_module(f"{node.module}.{alias.name}")
            )
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _offline_imports(path: Path) -> set[str]:
    return {m for m in _imported(path) if m == OFFLINE or m.startswith(OFFLINE + ".")}


def _importers() -> dict[str, set[str]]:
    """Source files outside ``agents/offline`` that import it, with what they import."""
    result = {}
    for package in SOURCES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("agents/offline/"):
                continue
            if found := _offline_imports(path):
                result[rel] = found
    return result


def test_only_the_model_factory_imports_the_offline_model() -> None:
    importers = _importers()
    outside = {
        rel: sorted(found)
        for rel, found in importers.items()
        if rel != FACTORY and not (rel.startswith("evals/") and found <= {WORDS})
    }
    assert outside == {}
    assert FACTORY in importers  # the factory is how a session gets it


def test_evals_import_only_the_word_list() -> None:
    evals = {rel: found for rel, found in _importers().items() if rel.startswith("evals/")}
    assert evals == {"evals/graders/consistency.py": {WORDS}}


def test_nothing_in_app_imports_the_offline_model() -> None:
    assert [rel for rel in _importers() if rel.startswith("app/")] == []


def test_the_word_list_stands_alone() -> None:
    """The grader's import of the word list loads no rule engine."""
    words = ROOT / "agents" / "offline" / "words.py"
    assert {m for m in _imported(words) if m.startswith("agents")} == set()
    probe = (
        "import sys, agents.offline.words; "
        "print(sorted(m for m in sys.modules if m.startswith('agents.offline')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "['agents.offline', 'agents.offline.words']"


_IMPORT_EACH_FIRST = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m.split('.')[0] in ('agents', 'tools', 'prompts')]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ImportError as error:
        failed.append(f'{name}: {error}')
print('\\n'.join(failed))
"""


def test_every_offline_module_imports_when_it_is_the_first_one_loaded() -> None:
    """An import cycle shows only in the order that enters it: the service loads the offline
    model through ``model`` and a test may load ``gates`` first. Each module is imported in
    turn as the first one of ours, in a fresh interpreter."""
    names = sorted(
        f"{OFFLINE}.{path.stem}" if path.stem != "__init__" else OFFLINE
        for path in (ROOT / "agents" / "offline").rglob("*.py")
        if path.parent.name == "offline"
    )
    names += sorted(
        f"{OFFLINE}.rules.{path.stem}"
        for path in (ROOT / "agents" / "offline" / "rules").glob("*.py")
        if path.stem not in ("__init__", "__main__")
    )
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH_FIRST, *names],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    assert done.stdout.strip() == ""
