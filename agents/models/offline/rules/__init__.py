"""The offline model's grammar as one ordered rule table (see :mod:`.table`)."""

from agents.models.offline.rules.base import TRACE, Example, Rule, Turn, attempt
from agents.models.offline.rules.docs import capabilities, render_readme
from agents.models.offline.rules.table import RULES, SECTIONS, Section

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
