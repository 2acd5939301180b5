"""The rule table itself: its shape and the docs rendered from it.

The grammar tables of agents/offline/README.md and the capability answer are generated
from the rules' examples; a stale README fails here (regenerate it with
``python -m agents.offline.rules --readme``).
"""

from __future__ import annotations

from pathlib import Path

from agents.offline import planner
from agents.offline.rules import RULES, SECTIONS, capabilities, render_readme
from agents.offline.rules.__main__ import main
from agents.offline.rules.docs import README

_STAGES = ["message", "question", "command"]


def test_rules_are_named_ordered_and_exemplified() -> None:
    names = [rule.name for rule in RULES]
    assert len(set(names)) == len(names)
    stages = [_STAGES.index(rule.stage) for rule in RULES]
    assert stages == sorted(stages), "message rules, then questions, then commands"
    sections = {section.key for section in SECTIONS}
    for rule in RULES:
        assert rule.section in sections, rule.name
        assert rule.examples, f"{rule.name} has no examples"
        for example in rule.examples:
            assert example.does.strip() and example.text.strip(), rule.name
    assert [rule.name for rule in RULES if rule.stage == "command"][-1] == "add"


def test_capabilities_are_rendered_from_the_examples() -> None:
    text = capabilities()
    assert text == planner.CAPABILITIES
    menus = [e.menu for rule in RULES for e in rule.examples if e.menu]
    for menu in menus:
        assert f'"{menu}"' in text
    assert "rename A to B" in text and "ANTHROPIC_API_KEY" in text


def test_readme_grammar_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    assert render_readme(text) == text, (
        "agents/offline/README.md's grammar tables are stale: "
        "run python -m agents.offline.rules --readme"
    )
    for rule in RULES:
        for example in rule.examples:
            assert example.does in text, example.does


def test_readme_command_rewrites_a_stale_copy(tmp_path: Path) -> None:
    stale = README.read_text(encoding="utf-8").replace("| `rename the workflow to", "| `x", 1)
    path = tmp_path / "README.md"
    path.write_text(stale, encoding="utf-8")
    assert main(["--check", str(path)]) == 1
    assert main(["--readme", str(path)]) == 0
    assert main(["--check", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == README.read_text(encoding="utf-8")
