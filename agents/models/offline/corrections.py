"""Follow-up corrections, the way experts give them after seeing a build.

"That's right, except when the coverage comes back active with a copay
exception, flag it for manual review" (seed 000: "except when the coverage check
returns `active` but there's a `copay-exception` extension, you need to flag it
for manual review") adds one step, after the step the condition is about, on a
JS edge with that condition. The existing path from that step is kept.

Understood shapes (anything else is refused, never guessed):
* a lead: "that's right / correct / yes / looks good", then "except" or "but",
  or just "except";
* "when|if <condition>, <action>", where <condition> is either a plain condition
  ("the amount is over 500") or "<step> returns|comes back <value>" optionally
  followed by "but there's / and there's / with <a flag>";
* <action>: a step to add ("flag it for manual review", "you need to email the
  supervisor").
"""

from __future__ import annotations

import re

from agents.models.offline.conditions import parse_condition, require_clear
from agents.models.offline.plan import Outcome, Plan, Reply, call, edge_args
from agents.models.offline.references import Found, NeedsAnswer, Resolver, explain
from agents.models.offline.steps import new_step
from agents.models.offline.view import View
from tools.document.names import derive_key

PATTERN = re.compile(
    r"^(?:(?:that'?s|this\s+is|it'?s)\s+(?:right|correct|good|fine|almost\s+right)|yes|yep"
    r"|correct|looks\s+(?:good|right))?[\s,.!;-]*(?:(?:but|except)\s+(?:that\s+)?|except\s+)"
    r"(?:when|if|whenever)\s+(?P<cond>.+?)\s*,\s*(?P<action>.+?)[.!]?$",
    re.I | re.S,
)
_RESULT = re.compile(
    r"^(?:the\s+)?(?P<subject>.+?)\s+(?:returns|comes\s+back|came\s+back|is\s+returned|returned)"
    r"(?:\s+as)?\s+(?P<value>'[^']+'|\"[^\"]+\"|[\w-]+)(?P<rest>.*)$",
    re.I,
)
_EXTRA = re.compile(
    r"^\s*(?:,?\s*(?:but|and)\s+)?(?:there'?s|there\s+is|it\s+has|with)\s+(?:an?\s+|the\s+)?"
    r"(?P<flag>.+?)(?:\s+(?:extension|flag|field|code|marker))?$",
    re.I,
)
_DUTY = re.compile(
    r"^(?:(?:you|we|i|they)\s+(?:need|have|want)\s+to\s+|(?:you|we|i)\s+(?:must|should)\s+"
    r"|(?:you|we|i)\s+)",
    re.I,
)


def correct(text: str, view: View, resolver: Resolver) -> Outcome | None:
    match = PATTERN.match(text)
    if match is None or not view.jobs:
        return None
    condition_text = match.group("cond").strip()
    action = _DUTY.sub("", match.group("action").strip())
    result = _RESULT.match(condition_text)
    if result:
        value = result.group("value").strip("'\"")
        subject = result.group("subject")
        phrase = f"the status is {value}"
        extra = _EXTRA.match(result.group("rest")) if result.group("rest").strip() else None
        if result.group("rest").strip() and extra is None:
            return _refuse(condition_text)
        if extra:
            phrase += f" and the {extra.group('flag').strip(chr(39) + chr(34))} is present"
        condition = require_clear(parse_condition(phrase))
    else:
        subject = re.split(r"\s+(?:is|are|has|have|was|were|equals|contains)\b", condition_text)[0]
        condition = require_clear(parse_condition(condition_text))
    if condition is None or condition.type != "js_expression":
        return _refuse(condition_text)
    anchor = _anchor(subject, resolver, view)
    name, adaptor = new_step(action)
    if not name or name.split()[0].lower() in ("if", "when", "otherwise", "then"):
        return _refuse(action)
    key = derive_key(name)
    edge = edge_args(
        anchor, key, "js_expression", condition.expression, condition.label or condition_text
    )
    return Plan(
        [
            call("add_jobs", jobs=[{"name": name, "adaptor": adaptor}]),
            call("add_edges", edges=[edge]),
        ],
        f'Adding "{name}" after "{view.name_of(anchor)}", {condition.words()}; the existing '
        f'path from "{view.name_of(anchor)}" is unchanged.',
    )


def _anchor(subject: str, resolver: Resolver, view: View) -> str:
    """The step whose result the condition is about ("the coverage check" -> Check coverage);
    asks when it is not clear which step that is."""
    cleaned = re.sub(r"^(?:the|a|an)\s+", "", subject.strip(), flags=re.I)
    shorter = re.sub(r"\s+(?:check|step|result|lookup)$", "", cleaned, flags=re.I)
    first = resolver.resolve(cleaned)
    if isinstance(first, Found):
        return first.key
    second = resolver.resolve(shorter)
    if isinstance(second, Found):
        return second.key
    raise NeedsAnswer(explain(first, view))


def _refuse(part: str) -> Reply:
    return Reply(
        f'I understood that you want a change, but not "{part}", so I changed nothing. Say it '
        'as "except when <field> is <value>, <step to add>", e.g. "except when the coverage '
        'comes back active with a copay exception, flag it for manual review".',
        asks=True,
    )
