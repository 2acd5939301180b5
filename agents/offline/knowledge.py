"""Descriptions of knowledge rather than steps: read, said back, never built.

Seed 000's Maria ("Orthopedic referrals need recent imaging. Cardiology needs an EKG
report and recent labs. Behavioral health needs a clinical summary but not labs. The
compiled tool checks `DocumentReference` resources against referral-type requirements
and identifies what's missing.") and James ("He knows which practices have stopped
accepting certain insurance plans, which have capacity constraints, … The compiled
tool queries `Practitioner` and `Organization` resources and validates the referral
against James's routing knowledge.") describe what an expert knows and what a tool
does with it, not the steps of a run in order. The offline builder cannot place that
in a workflow (what starts it, what each step hands on), so it changes nothing and
says back what it understood:

* rule rows, "<kind> [<things>] need(s)|require(s)|must have <items> [but not <items>]",
  as a table (kind: items, without: items);
* "<someone> knows which|what|who|how …": the knowledge, and whether its rules are
  given (rows) or only named;
* "the tool|system|workflow checks|queries|validates …": what it should do, with the
  FHIR resources it names (CamelCase words in backticks or alone);
* every other sentence, shown as not read as part of the process.

Only a text with at least two rule rows, or a "knows" sentence with a row or a
"the tool …" sentence, is read this way; anything else is left to the other rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline.plan import Reply

_TITLE = re.compile(r"^\s*\*\*(?P<title>[^*]{1,80}?)[.:]?\*\*\s*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'`*])")
_KNOWS = re.compile(
    r"^(?P<who>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?|(?:the|our)\s+\w+(?:\s+\w+)?|he|she|they|we|i)"
    r"\s+(?:also\s+)?knows?\s+(?P<what>.+)$",
    re.I,
)
_ROW = re.compile(
    r"^(?!(?:the|a|an|this|that|it|they|we|i|you|each|every|our|their|he|she)\b)"
    r"(?P<kind>[A-Z][\w/&-]*(?:\s+[a-z/&-]+){0,2}?)(?:\s+(?P<noun>referrals?|orders?|cases?"
    r"|patients?|requests?|claims?|visits?|samples?|tests?))?\s+(?:always\s+|also\s+|only\s+)?"
    r"(?P<verb>needs?|requires?|must\s+(?:have|include)|calls?\s+for)\s+(?P<items>.+)$"
)
_TOOL = re.compile(
    r"^(?:the|our|a|this)\s+(?:compiled\s+|new\s+)?(?:tool|system|workflow|process|job|check)\s+"
    r"(?P<does>(?:checks|queries|validates|verifies|compares|looks\s+up|identifies|flags|routes"
    r"|fetches|reads|matches)\b.+)$",
    re.I,
)
_EXCEPT = re.compile(r"\s*(?:,\s*|\s)(?:but\s+(?:not|no)|and\s+no|not)\s+", re.I)
_RESOURCE = re.compile(r"[`'\"]([A-Z][A-Za-z]+)[`'\"]|\b([A-Z][a-z]+(?:[A-Z][a-z]+)+)\b")
_QUOTES = re.compile(r"[`'\"]([A-Z][A-Za-z]+)[`'\"]")


@dataclass
class Row:
    kind: str
    needs: list[str]
    without: list[str] = field(default_factory=list)


@dataclass
class Reading:
    title: str | None = None
    knows: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    does: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


def read(text: str) -> Reading | None:
    """The knowledge ``text`` describes, or None when it does not read as knowledge."""
    body = " ".join(text.split())
    reading = Reading()
    title = _TITLE.match(body)
    if title:
        reading.title = title.group("title").strip()
        body = body[title.end() :]
    for raw in _SENTENCE.split(body):
        sentence = raw.strip().rstrip(".!").strip()
        plain = _QUOTES.sub(r"\1", sentence.replace("`", ""))
        if not sentence:
            continue
        if known := _KNOWS.match(plain):
            reading.knows.append(f"{known.group('who')} knows {known.group('what')}")
        elif row := _ROW.match(plain):
            reading.rows.append(_row(row))
        elif tool := _TOOL.match(plain):
            reading.does.append(tool.group("does"))
            for found in _RESOURCE.finditer(sentence):
                name = found.group(1) or found.group(2)
                if name not in reading.resources:
                    reading.resources.append(name)
        else:
            reading.other.append(sentence)
    enough = len(reading.rows) >= 2 or (reading.knows and (reading.rows or reading.does))
    return reading if enough else None


def _row(match: re.Match[str]) -> Row:
    kind = match.group("kind").strip()
    if match.group("noun"):
        kind = f"{kind} {match.group('noun')}"
    needs, *rest = _EXCEPT.split(match.group("items"), maxsplit=1)
    return Row(kind, _items(needs), _items(rest[0]) if rest else [])


def _items(text: str) -> list[str]:
    parts = re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+", text.strip())
    return [re.sub(r"^(?:an?|the|some)\s+", "", p, flags=re.I) for p in parts if p.strip()]


def refuse(text: str) -> Reply | None:
    """What was understood, and what is missing to build it; None if ``text`` is not
    knowledge."""
    reading = read(text)
    if reading is None:
        return None
    about = f' ("{reading.title}")' if reading.title else ""
    lines = [
        f"This describes what someone knows and what a tool should do with it{about}, not "
        "the steps of a run in order, so I changed nothing. This is what I understood:"
    ]
    lines += [f"- {k}" for k in reading.knows]
    if reading.rows:
        lines.append("- Rules, one per kind:")
        for row in reading.rows:
            said = ", ".join(row.needs)
            if row.without:
                said += f" (not {', '.join(row.without)})"
            lines.append(f"  - {row.kind}: {said}")
    elif reading.knows:
        lines.append(
            "- I could not read the rules themselves from it (which ones, with which values): "
            "it only says that they exist."
        )
    lines += [f"- What it should do: {d}" for d in reading.does]
    if reading.resources:
        lines.append(f"- FHIR resources it names: {', '.join(reading.resources)} (fhir)")
    if reading.other:
        lines.append(
            "Not read as part of the process: " + "; ".join(f'"{o}"' for o in reading.other)
        )
    fetch = "fetch the referral from Epic"
    if reading.resources:
        fetch = f"fetch the {' and '.join(reading.resources)} resources from Epic"
    ask = (
        f'To build it, tell me what starts it and the steps in order, e.g. "When a referral '
        f"arrives, {fetch}, then check the referral against the rules, then email the result "
        'to the coordinator."'
    )
    if not reading.rows:
        ask += ' Give the rules too, as "if <field> is <value>, <step>".'
    lines.append(ask)
    return Reply("\n".join(lines), asks=True)
