"""Keep a value inside the tags a template puts around it.

A template that writes ``<user_message>\\n{{message}}\\n</user_message>`` promises
the model that the message ends at the closing tag. A message that itself
contains ``</user_message>`` would end it early and smuggle what follows in as
prompt text. :func:`fence` neutralises every opening or closing form of the
template's fencing tags inside the value (``</user_message>``, ``< /USER_MESSAGE >``,
``<user_message attr>``) by writing its ``<`` as ``&lt;``: the model still reads
what the user wrote, but no tag of that name can open or close in it.
"""

from __future__ import annotations

import re
from functools import lru_cache

_ENCLOSED = re.compile(
    r"<([A-Za-z_][A-Za-z0-9_.-]*)>\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*</\1>"
)


def enclosing_tags(template: str) -> dict[str, str]:
    """Each placeholder that is the whole content of a tag, mapped to the tag's name."""
    return {match.group(2): match.group(1) for match in _ENCLOSED.finditer(template)}


@lru_cache(maxsize=64)
def _tag_pattern(tags: frozenset[str]) -> re.Pattern[str]:
    # Any "<", optional "/" and whitespace (also unicode spaces), then one of the names.
    names = "|".join(re.escape(tag) for tag in sorted(tags))
    return re.compile(r"<(?=\s*/?\s*(?:" + names + r")(?![A-Za-z0-9_.-]))", re.IGNORECASE)


def fence(value: str, *tags: str) -> str:
    """``value`` with no ``<tag ...>`` or ``</tag>`` of any of ``tags`` left in it."""
    return _tag_pattern(frozenset(tags)).sub("&lt;", value) if tags else value
