"""Cheap refusals: a document's size and its numbers of jobs and edges, checked on the
raw text before it is parsed, so a document over a limit costs milliseconds, not the
seconds of parsing, minting ids and validating every job first.

Parsing is the expensive part (even libyaml's event stream costs ~3 µs an event, a
quarter of a second for 10,000 jobs), so the YAML formats are counted from the lines
themselves: in block style (what every exporter and editor writes), the entries of a
block mapping are exactly the lines at its indentation that are not comments, since
anything inside an entry (its fields, a block scalar's text, a quoted or plain
scalar's continuation lines) is indented further (YAML 1.2, 8.2.2 and 7.3). A
section written in flow style (``jobs: {a: ..., b: ...}``) is counted on the parsed
plain data instead, still before any document is built or id minted.
A CLI ``workflow.json`` is JSON, which the C decoder reads in milliseconds: it is
counted from its data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from tools.document.yaml_io import DEFAULT_MAX_BYTES, check_size, load_yaml
from tools.errors import DocumentError

DEFAULT_MAX_JOBS = 5000
DEFAULT_MAX_EDGES = 10000

Format = Literal["yaml", "lightning", "cli"]


@dataclass(frozen=True)
class DocumentLimits:
    """What one request's document (or all the workflows of one import) may hold."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_jobs: int = DEFAULT_MAX_JOBS
    max_edges: int = DEFAULT_MAX_EDGES


@dataclass(frozen=True)
class Counts:
    jobs: int
    edges: int


def check_text(text: str, fmt: Format, limits: DocumentLimits) -> None:
    """Refuse ``text`` when it is over the size limit (``document_too_large``) or holds
    more jobs (``too_many_jobs``) or edges (``too_many_edges``) than allowed, before any
    per-job work (building the document, minting ids). The counts are read from the
    lines (block style) or the JSON; a section in flow style is counted on the plain
    YAML data instead (one parse, nothing built). Text that is neither is left to the
    parser, which says what is wrong."""
    check_size(text, limits.max_bytes)
    counts = _count_json(text) if fmt == "cli" else _count_yaml(text, lightning=fmt == "lightning")
    if counts is None and fmt != "cli":
        counts = _count_loaded(text, lightning=fmt == "lightning", max_bytes=limits.max_bytes)
    if counts is not None:
        check_counts(counts, limits)


def _count_loaded(text: str, *, lightning: bool, max_bytes: int) -> Counts | None:
    """Jobs and edges of YAML text the line count cannot read (flow style), from its
    parsed data; ``None`` when it does not parse (the importer reports why)."""
    try:
        data = load_yaml(text, max_bytes=max_bytes)
    except DocumentError:
        return None
    if not isinstance(data, Mapping):
        return None
    workflows = data.get("workflows") if lightning else {"": data}
    if not isinstance(workflows, Mapping):
        return None
    jobs = edges = 0
    for workflow in workflows.values():
        if isinstance(workflow, Mapping):
            jobs += _entry_count(workflow.get("jobs"))
            edges += _entry_count(workflow.get("edges"))
    return Counts(jobs, edges)


def _entry_count(section: Any) -> int:
    """The entries of a ``jobs`` or ``edges`` section; a section that is not a
    collection (``jobs: 5``, ``edges: true``, a string) holds none here, and the
    importer refuses it naming the field."""
    return len(section) if isinstance(section, Mapping | list) else 0


def check_counts(counts: Counts, limits: DocumentLimits) -> None:
    if counts.jobs > limits.max_jobs:
        raise DocumentError(
            f"The document has {counts.jobs} jobs; the limit is {limits.max_jobs}.",
            code="too_many_jobs",
        )
    if counts.edges > limits.max_edges:
        raise DocumentError(
            f"The document has {counts.edges} edges; the limit is {limits.max_edges}.",
            code="too_many_edges",
        )


# --- YAML, block style, from the lines ---------------------------------------------


@lru_cache(maxsize=64)
def _at_indent(indent: int) -> re.Pattern[str]:
    """A line starting exactly ``indent`` spaces in, with something other than a comment."""
    return re.compile(rf"^ {{{indent}}}(?=[^ \t\r\n#])", re.MULTILINE)


_NEXT_CONTENT = re.compile(r"^( *)[^ \t\r\n#]", re.MULTILINE)


def _entries(text: str, start: int, end: int, indent: int) -> list[tuple[int, int]]:
    """The (start, end) of each entry of the block collection at ``indent`` between
    ``start`` (a line's start) and ``end``."""
    starts = [m.start() for m in _at_indent(indent).finditer(text, start, end)]
    return list(zip(starts, [*starts[1:], end][: len(starts)], strict=True))


def _key(text: str, start: int) -> tuple[str, bool]:
    """The key of the entry at ``start``, and whether its value is on the lines below
    (nothing but a comment after the colon)."""
    line_end = text.find("\n", start)
    line = text[start : len(text) if line_end < 0 else line_end].strip()
    name, _, rest = line.partition(":")
    rest = rest.strip()
    return name.strip().strip("'\""), not rest or rest.startswith("#")


def _children(text: str, start: int, end: int) -> list[tuple[int, int]] | None:
    """The entries of the block value of the entry at ``start`` (its lines up to
    ``end``); ``None`` when there is no indented block below it."""
    first_line_end = text.find("\n", start, end)
    if first_line_end < 0:
        return []
    found = _NEXT_CONTENT.search(text, first_line_end + 1, end)
    if found is None:
        return []
    parent_indent = len(text[start:first_line_end]) - len(text[start:first_line_end].lstrip(" "))
    indent = len(found.group(1))
    if indent <= parent_indent:
        return None
    return _entries(text, found.start(), end, indent)


def _sections(
    text: str, entries: list[tuple[int, int]], *keys: str
) -> Iterator[tuple[str, list[tuple[int, int]] | None]]:
    for start, end in entries:
        key, below = _key(text, start)
        if key in keys:  # a value on the key's own line (flow style): not counted here
            yield key, _children(text, start, end) if below else None


def _count_workflow(text: str, entries: list[tuple[int, int]]) -> Counts | None:
    counts = {"jobs": 0, "edges": 0}
    for key, children in _sections(text, entries, "jobs", "edges"):
        if children is None:
            return None
        counts[key] += len(children)
    return Counts(**counts)


def _count_yaml(text: str, *, lightning: bool) -> Counts | None:
    top = _entries(text, 0, len(text), 0)
    if not lightning:
        return _count_workflow(text, top)
    jobs = edges = 0
    for _, workflows in _sections(text, top, "workflows"):
        if workflows is None:
            return None
        for start, end in workflows:
            inner = _children(text, start, end)
            counts = None if inner is None else _count_workflow(text, inner)
            if counts is None:
                return None
            jobs, edges = jobs + counts.jobs, edges + counts.edges
    return Counts(jobs, edges)


# --- CLI workflow.json ---------------------------------------------------------------


def _count_json(text: str) -> Counts | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None  # the importer says what is wrong with it
    workflow = data.get("workflow", data) if isinstance(data, dict) else None
    steps = workflow.get("steps") if isinstance(workflow, dict) else None
    if not isinstance(steps, list):
        return None
    edges = sum(_next_count(step.get("next")) for step in steps if isinstance(step, dict))
    return Counts(jobs=len(steps), edges=edges)


def _next_count(value: Any) -> int:
    if isinstance(value, dict):
        return len(value)
    return 1 if isinstance(value, str) else 0
