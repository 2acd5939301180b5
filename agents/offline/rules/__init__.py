"""The offline model's grammar as one ordered rule table (see :mod:`.table`)."""

from agents.offline.rules.base import TRACE, Example, Rule, Turn, attempt
from agents.offline.rules.docs import capabilities, render_readme
from agents.offline.rules.table import RULES, SECTIONS, Section

__all__ = [
    "RULES",
    "SECTIONS",
    "TRACE",
    "Example",
    "Rule",
    "Section",
    "Turn",
    "attempt",
    "capabilities",
    "render_readme",
]
