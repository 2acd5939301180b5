"""The capability answer and the offline README's grammar tables, rendered from the
rules' examples (so neither can drift from what the model does).

``python -m agents.offline.rules --readme`` rewrites agents/offline/README.md's tables
in place; ``--check`` fails when they are stale.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from agents.offline.rules.base import Example
from agents.offline.rules.table import RULES, SECTIONS, Section

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(
    r"(?P<start><!-- grammar:start (?P<key>\w+)[^>]*-->\n)(?P<body>.*?)(?P<end><!-- grammar:end "
    r"(?P=key) -->)",
    re.S,
)
_INTRO = (
    "I'm the offline assistant (no AI model is configured), so I understand a fixed set of "
    "plain-English requests:"
)
_OUTRO = "Set ANTHROPIC_API_KEY to enable free-form requests."


def examples(section: str) -> list[Example]:
    return [example for rule in RULES if rule.section == section for example in rule.examples]


@functools.cache
def capabilities() -> str:
    """What the model says it understands: one line per section, its examples' menus."""
    lines = [_INTRO]
    for section in SECTIONS:
        items = [f'"{e.menu}"' for e in examples(section.key) if e.menu]
        if section.note:
            items.append(section.note)
        if items:
            label = f"{section.label}: " if section.label else ""
            lines.append(f"- {label}{', '.join(items)}")
    lines.append(_OUTRO)
    return "\n".join(lines)


def _code(text: str) -> str:
    shown = " ↵ ".join(line.strip() for line in text.splitlines())
    return f"`{_escape(shown)}`"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def table(section: Section) -> str:
    rows = [f"| You say | {section.answer} |", "|---|---|"]
    for example in examples(section.key):
        said = ", ".join(_code(text) for text in example.texts)
        rows.append(f"| {said} | {_escape(example.does)} |")
    return "\n".join(rows) + "\n"


def render_readme(text: str) -> str:
    """``text`` with every grammar block replaced by its section's table."""
    by_key = {section.key: section for section in SECTIONS}
    found = {m.group("key") for m in _BLOCK.finditer(text)}
    missing = sorted(set(by_key) - found)
    if missing:
        raise ValueError(f"README has no grammar block for: {', '.join(missing)}")

    def replace(match: re.Match[str]) -> str:
        section = by_key[match.group("key")]
        return match.group("start") + table(section) + match.group("end")

    return _BLOCK.sub(replace, text)
