"""The layout of a spec (:mod:`.spec`): its title, intro and process sections.

Sections are markdown headings of one level (a first heading of a higher level is
the title), or, in a text with no headings, numbered lines on their own that have
lines of their own under them ("1. Coverage check" then its steps), or else name
lines ("Coverage check:", "**Coverage check**") over lines of their own. A numbered
list whose every line is numbered is a list of steps, not of processes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from agents.offline import spec_patterns as P
from agents.offline.grammar import norm, unquote
from agents.offline.schedule import find_schedule
from tools.document.names import derive_key, sanitise_name
from tools.plan import PlannedTrigger

MAX_KEY = 40


@dataclass
class Section:
    """One process as it was read."""

    name: str
    key: str
    note: str = ""
    """What the heading says in brackets: "after Intake", "every day at 7"."""
    lines: list[str] = field(default_factory=list)
    """The section's own lines, as written."""
    purpose: str | None = None
    description: list[str] = field(default_factory=list)
    trigger: PlannedTrigger | None = None
    depends: list[tuple[str, str | None]] = field(default_factory=list)
    """(key of the section it depends on, the data it names or None)."""
    inputs: list[str] | None = None
    outputs: list[str] | None = None
    steps: list[str] = field(default_factory=list)
    review_by: str | None = None
    """Who decides on what the sections it depends on hand over (a review gate)."""


class Named(Protocol):
    """What a reference can name: a section of a spec, or a workflow of a plan."""

    @property
    def name(self) -> str: ...

    @property
    def key(self) -> str: ...


N = TypeVar("N", bound=Named)


def lookup(items: Sequence[N], ref: str, *, feedback: bool = False) -> N | None:
    """The item ``ref`` names by its name or key ('the "Intake" workflow', 'intake'), or
    None. ``feedback``: the ref comes from a user's message, which may also quote the name
    or end it with punctuation ('"Intake".'); a spec's references are taken as written."""
    text = unquote(ref) if feedback else ref.strip()
    wanted = norm(P.REFERENCE_NOISE.sub("", text))
    return next((i for i in items if wanted in (norm(i.name), norm(i.key))), None)


def lookup_all(
    items: Sequence[N], ref: str, *, feedback: bool = False
) -> tuple[list[N], list[str]]:
    """What ``ref`` names, as (found, unknown parts): one item ('Review and approve' is
    one name when an item is called that), else a list ('Intake and Coverage check',
    'A, B and C') looked up part by part. A ref that names nothing and is not a list is
    unknown as a whole."""
    whole = lookup(items, ref, feedback=feedback)
    if whole is not None:
        return [whole], []
    parts = [p for p in P.LIST_SPLIT.split(ref) if p.strip()]
    if len(parts) < 2:
        return [], [ref.strip()]
    found: dict[str, N] = {}
    unknown: list[str] = []
    for part in parts:
        item = lookup(items, part, feedback=feedback)
        if item is None:
            unknown.append(part.strip())
        else:
            found.setdefault(item.key, item)
    return list(found.values()), unknown


class Problems(list[str]):
    def add(self, text: str) -> None:
        if text not in self:
            self.append(text)


def split(
    lines: list[str], known: dict[str, str] | None = None
) -> tuple[str | None, list[str], list[Section], Problems]:
    """The title, the intro lines and the sections (headings and their lines). ``known``
    maps the names of an earlier plan's workflows (:func:`norm`) to their keys: a section
    with such a name keeps that key, even if the workflow was renamed by feedback."""
    problems = Problems()
    filled = [i for i, line in enumerate(lines) if line.strip()]
    headings = {i: P.HEADING.match(lines[i].strip()) for i in filled}
    marked = {i: m for i, m in headings.items() if m is not None}
    title: str | None = None
    first = filled[0] if filled else None
    if first is not None and first in marked:
        level = len(marked[first].group("hashes"))
        others = [len(m.group("hashes")) for i, m in marked.items() if i != first]
        if not others or min(others) > level:
            title = marked.pop(first).group("text").strip()
    if marked:
        level = min(len(m.group("hashes")) for m in marked.values())
        starts = [i for i, m in marked.items() if len(m.group("hashes")) == level]
        names = {i: marked[i].group("text") for i in starts}
    else:
        numbered = {i: m for i in filled if (m := P.NUMBERED.match(lines[i])) is not None}
        following = [_next(filled, i) for i in numbered]
        owns_lines = any(j is not None and j not in numbered for j in following)
        starts = sorted(numbered) if owns_lines else []
        names = {i: numbered[i].group("text") for i in starts}
        if not starts:
            # "Intake:" or "**Intake**" on a line of its own, over the process's lines.
            named = {i: m for i in filled if (m := _name_line(lines[i])) is not None}
            owns_lines = any(_next(filled, i) not in (*named, None) for i in named)
            starts = sorted(named) if owns_lines else []
            names = {i: named[i].group("bold") or named[i].group("colon") for i in starts}
    body_start = (first + 1) if title is not None and first is not None else 0
    intro = lines[body_start : starts[0] if starts else len(lines)]
    sections: list[Section] = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        name, note = heading_of(names[start])
        if norm(name) in (norm(s.name) for s in sections):
            problems.add(f'Two sections are called "{name}".')
        section = Section(name, "", note)
        for line in lines[start + 1 : end]:
            heading = P.HEADING.match(line.strip())
            if heading and heading.group("text").strip().lower().rstrip(":") == "steps":
                continue
            section.lines.append(heading.group("text") if heading else line)
        if len(name) > 100:
            problems.add(f'The heading "{name[:60]}..." is too long for a workflow name.')
        sections.append(section)
    _keys(sections, known or {})
    if sections:
        for line in intro:
            if line.strip() and (P.ITEM.match(line) or P.LABELLED.match(line.strip())):
                problems.add(
                    f'"{line.strip()}" comes before the first section, so I could not '
                    "tell which process it belongs to."
                )
    kept = [line.strip() for line in intro if line.strip()]
    if title is None and sections and kept and _plain_title(intro):
        title, kept = kept[0].rstrip(":").strip(), kept[1:]
    return title, kept, sections, problems


def _says_when(note: str) -> bool:
    """'after Intake', 'every day at 7', 'webhook': a note. '(v2)' stays in the name."""
    patterns = (P.AFTER, P.ONCE, P.USES, P.DEPENDS, P.WEBHOOK_LINE, P.LABELLED)
    return any(p.match(note) for p in patterns) or find_schedule(note) is not None


@dataclass
class Block:
    """A step, a sentence or a paragraph of a section, as written (wrapped lines joined)."""

    text: str
    item: bool
    """A list item (a step), not prose."""
    row: int
    indent: int


def blocks(lines: list[str]) -> list[Block]:
    """The section's lines as blocks: a wrapped line ("... over http and" / "save it.")
    continues the one before; a line that starts with a capital letter, a label or a list
    marker starts a new block."""
    found: list[Block] = []
    last: Block | None = None
    for row, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            last = None
            continue
        indent = len(raw) - len(raw.lstrip())
        item = P.ITEM.match(raw)
        labelled = P.LABELLED.match(line) is not None
        if not item and not labelled and last is not None and _continues(last, line, indent):
            last.text = f"{last.text} {line}"
            continue
        block = Block(item.group("text") if item else line, bool(item), row, indent)
        found.append(block)
        last = None if labelled else block
    return found


def _continues(block: Block, line: str, indent: int) -> bool:
    wrapped = not block.text.endswith((".", "!", "?", ":")) and line[:1].islower()
    return wrapped or (block.item and indent > block.indent)


def _plain_title(intro: list[str]) -> bool:
    """'Lab results pipeline' alone on the first line, over the rest: a title."""
    filled = [n for n, line in enumerate(intro) if line.strip()]
    line = intro[filled[0]].strip()
    alone = len(filled) == 1 or filled[1] > filled[0] + 1
    plain = not (P.ITEM.match(line) or P.LABELLED.match(line) or line.endswith((".", "!", "?")))
    return alone and plain and len(line.split()) <= 8


def _name_line(line: str) -> re.Match[str] | None:
    found = P.NAME_LINE.match(line)
    if found is None or P.LABELLED.match(line.strip()):
        return None
    return found if len((found.group("bold") or found.group("colon")).split()) <= 8 else None


def _keys(sections: list[Section], known: dict[str, str]) -> None:
    """Known names keep their keys first; every other section gets its heading's slug."""
    taken: dict[str, str] = {}
    for section in sections:
        # The plan holds the name as the document keeps it ("Provider s check").
        key = known.get(norm(section.name)) or known.get(norm(sanitise_name(section.name)))
        if key is not None and key not in taken:
            section.key, taken[key] = key, section.name
    for section in sections:
        if not section.key:
            section.key = unique(slug(section.name), taken)
            taken[section.key] = section.name


def _next(filled: list[int], i: int) -> int | None:
    later = [j for j in filled if j > i]
    return later[0] if later else None


def heading_of(text: str) -> tuple[str, str]:
    """'2. Coverage check (after Intake):' -> ('Coverage check', 'after Intake')."""
    text = P.HEADING_NUMBER.sub("", text.strip()).strip().rstrip(":").strip()
    text = re.sub(r"^\*\*(.+)\*\*$", r"\1", text).strip()
    note = P.HEADING_NOTE.match(text)
    if note and _says_when(note.group("note").strip()):
        return note.group("name").strip(), note.group("note").strip()
    return text, ""


def slug(name: str) -> str:
    """'Coverage check' -> 'coverage-check': letters, digits and '-', a letter first."""
    # derive_key (a job's key, the lower layer) gives the characters, but a workflow's
    # key has rules of its own: tools.plan.model.KEY_PATTERN wants a letter first and at
    # most 40 characters ("2024 Reports" -> "reports"; a long heading is cut at a word),
    # where a job key may start with a digit and has 100; and the heading is read the way
    # norm() reads a reference to it, so a possessive loses its "s" ("Provider's check"
    # -> "provider-check"; derive_key: "provider-s-check"). The keys of plans already
    # proposed and built depend on this; test_spec.py pins the difference.
    key = derive_key(re.sub(r"^[^a-z]+", "", norm(name))) or "workflow"
    if len(key) > MAX_KEY:
        cut = key[: MAX_KEY + 1]
        key = cut[: cut.rfind("-")] if "-" in cut else key[:MAX_KEY]
    return key.rstrip("-")


def unique(key: str, taken: dict[str, str]) -> str:
    """``key``, or ``key-2``, ``key-3``... (cut at a word to stay within the key length)."""
    if key not in taken:
        return key
    n = 2
    while True:
        suffix = f"-{n}"
        base = key
        while len(base) + len(suffix) > MAX_KEY:
            base = base[: base.rfind("-")] if "-" in base else base[: MAX_KEY - len(suffix)]
        if base + suffix not in taken:
            return base + suffix
        n += 1
