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

from agents.offline.grammar import camel, js_string, unquote
from agents.offline.plan import Reply
from agents.offline.references import NeedsAnswer
from agents.offline.values import (
    RECORDS,
    Unclear,
    Value,
    either,
    ends_early,
    has_action,
    is_flag,
    plainly,
    read_value,
)
from tools.document.conditions import looks_at_errors, on_success_and
from tools.document.structure import condition_text
from tools.jobcode import check_job_code

_LEAD = re.compile(
    r"^(?:,\s*)?(?:(?:and\s+)?(?:only|solely|exclusively|just|run|runs|running|but)\s+)*"
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
    r"^(?P<subject>.+?)\s+(?P<op>is\s+not|isn't|are\s+not|aren't|does\s+not\s+equal"
    r"|doesn't\s+equal|exceeds|equals|starts\s+with|begins\s+with|ends\s+with|contains|includes"
    r"|has\s+no|have\s+no|has|have|exists|is|are|=|==)(?:\s+(?P<value>.+))?$",
    re.I,
)
_NEGATIVE_OPS = frozenset(
    {"is not", "isn't", "are not", "aren't", "does not equal", "doesn't equal"}
)


@dataclass(frozen=True)
class Condition:
    type: str
    expression: str | None = None
    """For js_expression: the check as stated (without the success guard)."""
    label: str | None = None
    subject: str | None = None  # the step named in "if X fails", when one is
    reason: str | None = None
    """For an unclear condition: why it cannot be written down (said when asking)."""
    opposite: str | None = None
    """The label of the negated check, when the reader knows it ("neither HMO nor PPO")."""

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
            label = self.opposite or (_negated_label(self.label) if self.label else None)
            if looks_at_errors(self.expression):
                # Written to decide on failure itself: its negation is the exact opposite.
                return Condition("js_expression", f"!({self.expression})", label)
            return Condition("js_expression", negate(self.expression), label, opposite=self.label)
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


def require_clear(condition: Condition | None) -> Condition | None:
    """``condition``, or a question when it is one that cannot be written down (e.g. "when
    it is Tuesday" with no step before it for "it" to mean, "when the patient is a minor"):
    asked, never guessed."""
    if condition is None or condition.type != UNCLEAR:
        return condition
    if condition.reason:
        raise NeedsAnswer(
            Reply(
                f'I can\'t tell what "{condition.label}" should check: {condition.reason}. '
                'I changed nothing. Say it as one field and its value (e.g. "when the plan is '
                'HMO or PPO", "when the age is at least 65", "when the notes are empty") or '
                'write the condition as JavaScript (e.g. "when state.data.age >= 65").',
                asks=True,
            )
        )
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
    single = "&&" not in expression and "||" not in expression
    if single and expression.count("===") == 1 and "!==" not in expression:
        return expression.replace("===", "!==")
    if single and expression.count("!==") == 1 and "===" not in expression:
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
    if failure and re.search(r"\b(?:is|are|was|were)\b", failure[1] or "", re.I):
        # "the status is an error", "the result is positive or the test failed": a stated
        # value first (a step whose name has "is" in it still fails as a step).
        stated = _comparison(body, subject_hint)
        if stated is not None:
            return stated
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


# "the age is 65 and over" is one check, not two joined with "and".
_AND = re.compile(
    r"\s+and\s+(?!(?:over|above|up|older|more|higher|greater|under|below|younger|less|fewer"
    r"|lower)\b)",
    re.I,
)


def _comparison(body: str, subject_hint: str | None) -> Condition | None:
    body = re.sub(r"\b(it|that|this|he|she)'s\b", r"\1 is", body, flags=re.I)
    parts = [p.strip() for p in _AND.split(body)]
    atoms: list[tuple[str, str, str]] = []
    hint = subject_hint
    for part in parts:
        try:
            atom = _atom(part, hint)
        except Unclear as unclear:
            return Condition(UNCLEAR, label=body, reason=unclear.reason)
        if atom is None:
            return None
        atoms.append(atom)
    if not atoms:
        return None
    checks = [a[0] for a in atoms]
    if len(checks) > 1:
        checks = [f"({c})" if " || " in c else c for c in checks]
    expression = " && ".join(checks)
    label = " and ".join(a[1] for a in atoms)
    opposite = atoms[0][2] if len(atoms) == 1 else "otherwise"
    return Condition("js_expression", expression, label[:60], opposite=opposite[:60])


def _atom(text: str, hint: str | None) -> tuple[str, str, str] | None:
    """One check: its JS, its label, and the label of its opposite."""
    match = _COMPARISON.match(text)
    if not match:
        return None
    subject = match.group("subject").strip()
    # "the form's district": the record is state.data itself, so the field is "district".
    subject = re.sub(r"^.*?\b\w+'s\s+", "", subject)
    op = " ".join(match.group("op").lower().split())
    raw_value = (match.group("value") or "").strip()
    # "the result is positive": a value of the result, whatever field "the result" stands for.
    said = subject
    if subject.lower() in _PRONOUNS:
        if hint is None and subject.lower() in _BARE_PRONOUNS and raw_value:
            raise Unclear
        subject = hint or "result"
    said = subject if said.lower() in _BARE_PRONOUNS else said
    if len(subject.split()) > 4 or not re.search(r"[A-Za-z]", subject):
        return None
    path = "state.data." + camel(subject)
    shown = re.sub(r"^the\s+", "", subject, flags=re.I)
    value = unquote(raw_value) if raw_value else ""
    if op == "exists":
        return None if value else (f"Boolean({path})", f"{shown} present", f"{shown} missing")
    if not value:
        return None
    if op in ("has", "have"):
        return f"Boolean({path}?.{camel(value)})", f"has {value}", f"no {value}"
    if op in ("has no", "have no"):
        return f"!{path}?.{camel(value)}", f"no {value}", f"has {value}"
    if op in ("starts with", "begins with"):
        return _text_check(
            f"{path}?.startsWith({js_string(value)})", f"{shown} starts with {value}"
        )
    if op == "ends with":
        return _text_check(f"{path}?.endsWith({js_string(value)})", f"{shown} ends with {value}")
    if op in ("contains", "includes"):
        return _text_check(f"{path}?.includes({js_string(value)})", f"{shown} contains {value}")
    stated = value if op != "exceeds" else f"more than {value}"
    quoted = value != raw_value.strip(".,;:!?").strip()
    if not quoted and has_action(stated):
        return None  # the condition ends sooner: "HMO email the team"
    try:
        reading = (
            Value("is", "===", (js_string(value),), (value,)) if quoted else read_value(stated)
        )
    except Unclear as unclear:
        if ends_early(stated):
            return None  # the condition ends sooner: "65 or older email the team"
        reason = unclear.reason or f'"{stated}" is not a value I can compare "{shown}" with'
        raise Unclear(reason) from None
    if op in _NEGATIVE_OPS:
        reading = reading.opposite(stated)
    return _check(reading, said, shown, path, op, value)


def _text_check(expression: str, label: str) -> tuple[str, str, str]:
    return expression, label, f"not {label}"


def _check(
    reading: Value, subject: str, shown: str, path: str, op: str, value: str
) -> tuple[str, str, str]:
    negative = op in _NEGATIVE_OPS
    if reading.kind == "presence":
        missing = reading.op == "absent"
        check = f"!{path}" if missing else f"Boolean({path})"
        if negative:
            return check, f"{shown} not {value}", f"{shown} {value}"
        if missing:
            return check, f"{shown} {value}", f"{shown} not {value}"
        return check, f"{shown} present", f"{shown} missing"
    if reading.kind == "compare":
        if reading.age and not re.search(r"\bage$", subject, re.I):
            raise Unclear(
                f'"{value}" compares an age, and "{shown}" is not one: name the field that '
                f'holds it (e.g. "when the age is {plainly(value)}")'
            )
        if reading.op != "===" and subject.lower().split()[-1] in RECORDS:
            raise Unclear(
                f'"{shown}" is a whole record, not a number: name the field "{value}" is '
                f'about (e.g. "when the age is {value}" or "when the total is {value}")'
            )
        label = f"{shown} {op} {value}"
        if negative:
            verb = "are" if op.startswith("are") else "is"
            opposite = f"{shown} {verb} {value}"
        elif op in ("is", "are"):
            opposite = f"{shown} {op} not {value}"
        else:
            opposite = f"not {label}"
        return f"{path} {reading.op} {reading.items[0]}", label, opposite
    names = list(reading.names) if reading.bare else []
    if len(names) == 1 and is_flag(subject, names[0]):
        flag = "state.data." + camel(names[0])
        if reading.op == "===":
            return flag, names[0], f"not {names[0]}"
        return f"!{flag}", f"not {names[0]}", names[0]
    if len(names) > 1 and any(is_flag(subject, name) for name in names):
        raise Unclear(
            f'"{value}" reads as yes/no flags of the record, not values of "{shown}": '
            f'say e.g. "when the {shown} status is {either(names)}"'
        )
    join = " || " if reading.op == "===" else " && "
    expression = join.join(f"{path} {reading.op} {item}" for item in reading.items)
    if all(not item.startswith("'") for item in reading.items):
        # A number or true/false alone says nothing: "count is zero", "urgent flag is true".
        return expression, f"{shown} is {reading.words}", f"{shown} is {reading.opposite_words}"
    return expression, reading.words, reading.opposite_words


def _negated_label(label: str) -> str:
    """The label of the opposite of a check with no known opposite: "not <label>"."""
    if label.startswith("not "):
        return label[4:]
    return "otherwise" if " and " in label else f"not {label}"
