"""Edge conditions in plain English.

"on failure" / "if it fails" -> on_job_failure; "on success" -> on_job_success;
"always" -> always; "when state.data.total > 10" -> that JS expression; and
stated conditions such as "if the plan is BlueCross HMO" ->
``state.data.plan === 'BlueCross HMO'`` with the label "BlueCross HMO".

OpenFn evaluates a JS edge also when its source step failed, so a stated condition
means "on success and <check>": the edge's expression is the check behind the
runtime's success guard (``tools.document.conditions.on_success_and``), and the
"otherwise" edge negates the check only, under the same guard, so neither branch
runs for a failed step. JavaScript that reads ``state.errors`` itself is kept as
written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agents.offline.grammar import camel, js_string, unquote, words
from agents.offline.plan import Reply
from agents.offline.references import NeedsAnswer
from tools.document.conditions import looks_at_errors, on_success_and
from tools.document.structure import condition_text
from tools.jobcode import check_job_code

_LEAD = re.compile(
    r"^(?:,\s*)?(?:(?:and\s+)?(?:only|just|run|runs|running|but)\s+)*"
    r"(?:on|if|when|whenever|in\s+case(?:\s+of)?|upon|provided\s+that|as\s+long\s+as|after)?\s*",
    re.I,
)
_ALWAYS = re.compile(
    r"^(?:always|regardless(?:\s+of\s+.*)?|no\s+matter\s+what|unconditionally|in\s+(?:any|every)"
    r"\s+case|every\s+time|either\s+way|whatever\s+happens)$",
    re.I,
)
_FAILURE = re.compile(
    r"^(?:(?P<subject>.+?)\s+)?(?:fails?|failed|failure|errors?|errored|has\s+an\s+error"
    r"|throws(?:\s+an\s+error)?|crash(?:es)?|is\s+unsuccessful|doesn'?t\s+work|does\s+not\s+work"
    r"|goes\s+wrong|went\s+wrong|isn'?t\s+successful)(?:\s+to\s+\w+)?$",
    re.I,
)
_SUCCESS = re.compile(
    r"^(?:(?P<subject>.+?)\s+)?(?:succeeds?|succeeded|success|is\s+successful|works|passes"
    r"|completes(?:\s+successfully)?|finishes|is\s+done|goes\s+well|went\s+well)$",
    re.I,
)
_PRONOUNS = frozenset(
    {"it", "this", "that", "they", "the result", "the response", "the answer", "the check", "one"}
)
# "it"/"this" with no earlier step to stand for: the condition names no field.
_BARE_PRONOUNS = frozenset({"it", "this", "that", "they", "one"})
UNCLEAR = "unclear"
_JS_HINT = re.compile(r"state\.|\$\.|===|!==|==|!=|>=|<=|&&|\|\||[<>]|^!|\)$")
_COMPARISON = re.compile(
    r"^(?P<subject>.+?)\s+(?P<op>is\s+not|isn't|does\s+not\s+equal|doesn't\s+equal"
    r"|is\s+greater\s+than|is\s+more\s+than|is\s+over|is\s+above|exceeds|is\s+higher\s+than"
    r"|is\s+less\s+than|is\s+under|is\s+below|is\s+lower\s+than|is\s+at\s+least|is\s+at\s+most"
    r"|is\s+equal\s+to|equals|starts\s+with|begins\s+with|ends\s+with|contains|includes"
    r"|has\s+no|have\s+no|has|have|is\s+empty|is\s+missing|is\s+blank|is\s+present|exists"
    r"|is\s+set|is|are|=|==)(?:\s+(?P<value>.+))?$",
    re.I,
)
_OPS = {
    "is": "===",
    "are": "===",
    "=": "===",
    "==": "===",
    "equals": "===",
    "is equal to": "===",
    "is not": "!==",
    "isn't": "!==",
    "does not equal": "!==",
    "doesn't equal": "!==",
    "is greater than": ">",
    "is more than": ">",
    "is over": ">",
    "is above": ">",
    "exceeds": ">",
    "is higher than": ">",
    "is less than": "<",
    "is under": "<",
    "is below": "<",
    "is lower than": "<",
    "is at least": ">=",
    "is at most": "<=",
}


@dataclass(frozen=True)
class Condition:
    type: str
    expression: str | None = None
    """For js_expression: the check as stated (without the success guard)."""
    label: str | None = None
    subject: str | None = None  # the step named in "if X fails", when one is

    @property
    def edge_expression(self) -> str | None:
        """The edge's condition_expression: the check behind the success guard."""
        if self.type == "js_expression" and self.expression is not None:
            return on_success_and(self.expression)
        return self.expression

    def args(self) -> dict[str, Any]:
        values: dict[str, Any] = {"condition_type": self.type}
        if self.edge_expression is not None:
            values["condition_expression"] = self.edge_expression
        if self.label:
            values["condition_label"] = self.label
        return values

    def negated(self) -> Condition:
        if self.type == "on_job_success":
            return Condition("on_job_failure")
        if self.type == "on_job_failure":
            return Condition("on_job_success")
        if self.type == "js_expression" and self.expression:
            label = None
            if self.label:
                label = "otherwise" if " and " in self.label else f"not {self.label}"
                label = self.label[4:] if self.label.startswith("not ") else label
            if looks_at_errors(self.expression):
                # Written to decide on failure itself: its negation is the exact opposite.
                return Condition("js_expression", f"!({self.expression})", label)
            return Condition("js_expression", negate(self.expression), label)
        return self

    def field(self) -> str | None:
        """The first ``state.data`` field the condition tests ("insurance"), if any."""
        found = re.search(r"state\.data\.([\w$]+)", self.expression or "")
        return found.group(1) if found else None

    def words(self) -> str:
        if self.type == UNCLEAR:
            return f"when {self.label}"
        return condition_text(self.type, self.expression, self.label)


def none_of(conditions: list[Condition]) -> Condition:
    """The "for everything else" arm of a decision: none of the other arms' conditions."""
    if len(conditions) == 1:
        return conditions[0].negated()
    parts = [negate(c.expression or "") for c in conditions]
    expression = " && ".join(p if re.fullmatch(r"!?[\w.$?]+", p) else f"({p})" for p in parts)
    return Condition("js_expression", expression, "otherwise")


SUCCESS = Condition("on_job_success")
FAILURE = Condition("on_job_failure")
ALWAYS = Condition("always")


class _Unclear(Exception):
    """A stated condition whose subject is a pronoun with nothing to stand for."""


def require_clear(condition: Condition | None) -> Condition | None:
    """``condition``, or a question when it is one that cannot be written down (e.g. "when
    it is Tuesday" with no step before it for "it" to mean): asked, never guessed."""
    if condition is None or condition.type != UNCLEAR:
        return condition
    raise NeedsAnswer(
        Reply(
            f'I can\'t tell what "{condition.label}" should check, so I changed nothing. Name '
            'the field it is about (e.g. "when the <field> is <value>") or write the condition '
            "as JavaScript (e.g. \"when state.data.<field> === 'value'\").",
            asks=True,
        )
    )


def negate(expression: str) -> str:
    simple = re.fullmatch(r"!([\w.$?]+)", expression)
    if simple:
        return simple.group(1)
    if re.fullmatch(r"[\w.$?]+", expression):
        return f"!{expression}"
    if expression.count("===") == 1 and "!==" not in expression and "&&" not in expression:
        return expression.replace("===", "!==")
    if expression.count("!==") == 1 and "===" not in expression and "&&" not in expression:
        return expression.replace("!==", "===")
    return f"!({expression})"


def is_js(text: str) -> bool:
    if not _JS_HINT.search(text):
        return False
    return not check_job_code(f"fn(state => ({text}));")


def parse_condition(text: str, subject_hint: str | None = None) -> Condition | None:
    """The condition a phrase states, or None when it states none we understand."""
    original = text.strip().strip(".,;:!?").strip()
    body = _LEAD.sub("", original, count=1).strip()
    body = re.sub(r"^(?:the\s+)?(?:condition|rule)\s+(?:is\s+)?", "", body, flags=re.I)
    if not body:
        return None
    low = body.lower()
    if _ALWAYS.match(low):
        return ALWAYS
    if is_js(body) and (low.startswith(("state", "$", "!", "(")) or "state." in low):
        return Condition("js_expression", body, None)
    failure = _FAILURE.match(body)
    if failure:
        return Condition("on_job_failure", subject=_subject(failure.group("subject")))
    success = _SUCCESS.match(body)
    if success:
        return Condition("on_job_success", subject=_subject(success.group("subject")))
    return _comparison(body, subject_hint)


def _subject(text: str | None) -> str | None:
    if text is None:
        return None
    cleaned = re.sub(r"^(?:the\s+)", "", text.strip(), flags=re.I)
    return None if text.strip().lower() in _PRONOUNS or not cleaned else cleaned


def _comparison(body: str, subject_hint: str | None) -> Condition | None:
    body = re.sub(r"\b(it|that|this|he|she)'s\b", r"\1 is", body, flags=re.I)
    parts = [p.strip() for p in re.split(r"\s+and\s+", body, flags=re.I)]
    atoms: list[tuple[str, str]] = []
    hint = subject_hint
    for part in parts:
        try:
            atom = _atom(part, hint)
        except _Unclear:
            return Condition(UNCLEAR, label=body)
        if atom is None:
            return None
        atoms.append(atom)
    if not atoms:
        return None
    expression = " && ".join(a[0] for a in atoms)
    label = " and ".join(a[1] for a in atoms)
    return Condition("js_expression", expression, label[:60])


def _atom(text: str, hint: str | None) -> tuple[str, str] | None:
    match = _COMPARISON.match(text)
    if not match:
        return None
    subject = match.group("subject").strip()
    # "the form's district": the record is state.data itself, so the field is "district".
    subject = re.sub(r"^.*?\b\w+'s\s+", "", subject)
    op = " ".join(match.group("op").lower().split())
    raw_value = match.group("value")
    if subject.lower() in _PRONOUNS:
        if hint is None and subject.lower() in _BARE_PRONOUNS and (raw_value or "").strip():
            raise _Unclear
        subject = hint or "result"
    if len(subject.split()) > 4 or not re.search(r"[A-Za-z]", subject):
        return None
    path = "state.data." + camel(subject)
    shown = re.sub(r"^the\s+", "", subject, flags=re.I)
    value = unquote(raw_value) if raw_value else ""
    if op in ("is empty", "is missing", "is blank", "is present", "exists", "is set") and value:
        return None
    if op in ("is empty", "is missing", "is blank"):
        return f"!{path}", f"{shown} {op.removeprefix('is ')}"
    if op in ("is present", "exists", "is set"):
        return f"Boolean({path})", f"{shown} present"
    if not value:
        return None
    if op in ("has", "have"):
        return f"Boolean({path}?.{camel(value)})", f"has {value}"
    if op in ("has no", "have no"):
        return f"!{path}?.{camel(value)}", f"no {value}"
    if op in ("starts with", "begins with"):
        return f"{path}?.startsWith({js_string(value)})", f"{shown} starts with {value}"
    if op == "ends with":
        return f"{path}?.endsWith({js_string(value)})", f"{shown} ends with {value}"
    if op in ("contains", "includes"):
        return f"{path}?.includes({js_string(value)})", f"{shown} contains {value}"
    js_op = _OPS.get(op)
    if js_op is None:
        return None
    if js_op in ("===", "!==") and _is_flag(subject, value):
        flag = "state.data." + camel(value)
        return (flag if js_op == "===" else f"!{flag}"), ("" if js_op == "===" else "not ") + value
    literal = _literal(value)
    if js_op in (">", "<", ">=", "<=") and not re.fullmatch(r"-?\d+(?:\.\d+)?", literal):
        return None
    label = value if js_op == "===" else f"not {value}" if js_op == "!==" else f"{shown} {op} "
    if js_op not in ("===", "!=="):
        label += value
    return f"{path} {js_op} {literal}", label


_FIELDS = frozenset(
    words(
        "status state type plan code category result value level priority payer insurance "
        "gender country stage mode kind outcome source channel language region district"
    )
)
_ADJECTIVE = re.compile(
    r"^[a-z]+(?:ible|able|ive|ed|ent|ant|id|ete|ue|ing)$|^(?:new|open|late|found|known|done|paid"
    r"|sent|seen|given|taken|signed|urgent)$"
)


def _is_flag(subject: str, value: str) -> bool:
    """'the patient is eligible' is a yes/no flag; 'the status is active' is a value."""
    last = subject.lower().split()[-1]
    return last not in _FIELDS and bool(_ADJECTIVE.match(value))


def _literal(value: str) -> str:
    cleaned = value.replace(",", "") if re.fullmatch(r"-?[\d,]+(?:\.\d+)?", value) else value
    if re.fullmatch(r"-?\d+(?:\.\d+)?", cleaned):
        return cleaned
    if value.lower() in ("true", "yes"):
        return "true"
    if value.lower() in ("false", "no"):
        return "false"
    return js_string(value)
