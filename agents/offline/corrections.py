"""Follow-up corrections, the way experts give them after seeing a build.

"That's right, except when the coverage check returns `active` but there's a
`copay-exception` extension, you need to flag it for manual review" (seed 000)
adds exactly one step and one guarded branch to it, after the step the condition
is about; nothing else in the workflow changes. A rule change ("any ortho referral
with a plan code starting with `PPO-` also needs prior auth") is read by
:mod:`.rule_changes`.

Understood shapes (anything else is refused, never guessed):
* a lead: "that's right / correct / yes / looks good", then "except" or "but", or
  just "except", then "when|if <condition>, <action>";
* "also <action> when|if <condition>" and "when|if <condition>, also <action>";
* <condition>: a plain condition ("the amount is over 500"), "<step> returns|comes
  back <value>", or either with "but|and there's / it has / with <a flag>";
* <action>: a step to add ("flag it for manual review", "you need to email the
  supervisor"), optionally "after <step>" to say where it branches from.

Each new branch is a ``js_expression`` edge behind the runtime's success guard
(``!state.errors?.[upstreamStepId] && (…)``), so it never fires for a failed step.
A message with other sentences besides the correction ("Oh, Aetna changed this in
March.") changes nothing and says what was understood: such a sentence may narrow
the rule, and guessing how is not ours to do.
"""

from __future__ import annotations

import re

from agents.offline import rule_changes
from agents.offline.conditions import Condition, parse_condition, require_clear
from agents.offline.plan import Outcome, Plan, Reply, call, edge_args
from agents.offline.plausibility import name_problem, placement_problem
from agents.offline.references import Ambiguous, Found, NeedsAnswer, Resolver, explain
from agents.offline.steps import new_step
from agents.offline.view import View
from tools.document.names import derive_key

_LEAD = (
    r"(?:(?:that'?s|this\s+is|it'?s)\s+(?:right|correct|good|fine|almost\s+right)|yes|yep"
    r"|correct|looks\s+(?:good|right))?[\s,.!;-]*(?:(?:but|except)\s+(?:that\s+)?|except\s+)"
)
PATTERN = re.compile(
    r"^" + _LEAD + r"(?:when|if|whenever)\s+(?P<cond>.+?)\s*,\s*(?P<action>.+?)[.!]?$",
    re.I | re.S,
)
ALSO = re.compile(
    r"^(?:(?:please|pls|and|now|oh|ok|okay|so)[\s,]+)*(?:(?:also|additionally)\s+(?P<action>.+?)\s+(?:when|if|whenever)"
    r"\s+(?P<cond>.+?)"
    r"|(?:when|if|whenever)\s+(?P<cond2>.+?)\s*,\s*(?:then\s+)?(?:also|additionally)\s+"
    r"(?P<action2>.+?))[.!]?$",
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
_BUT = re.compile(r"\s*,?\s+but\s+", re.I)
_DUTY = re.compile(
    r"^(?:(?:you|we|i|they)\s+(?:need|have|want)\s+to\s+|(?:you|we|i)\s+(?:must|should)\s+"
    r"|(?:you|we|i)\s+)",
    re.I,
)
_RUN = re.compile(r"^(?:run|go\s+(?:on\s+)?to|send\s+(?:it|them)\s+to)\s+(?P<step>.+)$", re.I)
_AFTER = re.compile(r"^(?P<action>.+?)\s+(?:right\s+)?after\s+(?P<after>.+)$", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"])")


def matches(text: str) -> bool:
    """Whether the message (or one of its sentences) reads as a correction."""
    return any(_shape(part) for part in [text, *_sentences(text)])


def correct(text: str, view: View, resolver: Resolver) -> Outcome | None:
    if not view.jobs:
        return None
    text = plain(text)
    outcome = _one(text, view, resolver)
    if outcome is not None:
        return outcome
    sentences = _sentences(text)
    found = [(i, s) for i, s in enumerate(sentences) if _shape(s)]
    if len(sentences) < 2 or len(found) != 1:
        return None
    index, sentence = found[0]
    others = [s for i, s in enumerate(sentences) if i != index]
    understood = _one(sentence, view, resolver)
    if not isinstance(understood, Plan):
        return understood
    said = understood.intro
    extra = "; ".join(f'"{s.strip()}"' for s in others)
    return Reply(
        f'I understood the change in "{sentence.strip()}": {said} But I did not understand '
        f"{extra}: it may narrow or widen that rule, so I changed nothing. Send the rule on "
        'its own, with every condition in it (e.g. "any ortho referral with a plan code '
        'starting with PPO- also needs prior auth"), and I will make that one change.',
        asks=True,
        meta={"others": others},
    )


def plain(text: str) -> str:
    """Backticked words as quoted values (`PPO-` -> 'PPO-'), one line."""
    return " ".join(re.sub(r"`([^`]+)`", r"'\1'", text).split())


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(plain(text).strip()) if s.strip()]


def _shape(text: str) -> bool:
    text = text.strip()
    return bool(PATTERN.match(text) or ALSO.match(text) or rule_changes.PATTERN.match(text))


def _one(text: str, view: View, resolver: Resolver) -> Outcome | None:
    text = text.strip()
    if rule_changes.PATTERN.match(text):
        return rule_changes.change(text, view, resolver)
    match = PATTERN.match(text)
    if match is not None:
        return _branch(match.group("cond"), match.group("action"), view, resolver)
    also = ALSO.match(text)
    if also is not None:
        condition = also.group("cond") or also.group("cond2")
        # "also add a step … if check coverage fails" is not a stated condition: the step
        # rules read it.
        if _condition(condition.strip()) is None:
            return None
        return _branch(condition, also.group("action") or also.group("action2"), view, resolver)
    return None


def _branch(condition_text: str, action_text: str, view: View, resolver: Resolver) -> Outcome:
    condition_text = condition_text.strip()
    action = _DUTY.sub("", action_text.strip())
    after = _AFTER.match(action)
    if after:
        action = after.group("action")
    read = _condition(condition_text)
    if read is None:
        return _refuse(condition_text)
    condition, subject = read
    anchor = _anchor(after.group("after") if after else subject, resolver, view, condition)
    existing = _RUN.match(action)
    found = resolver.resolve(existing.group("step")) if existing else None
    if isinstance(found, Found):
        return _to_existing(anchor, found.key, condition, condition_text, view)
    name, adaptor = new_step(action)
    if not name or name.split()[0].lower() in ("if", "when", "otherwise", "then"):
        return _refuse(action)
    doubt = placement_problem(name) or name_problem(name)
    if doubt is not None:
        # "call the patient first": where the step goes (or when it runs) was said in words
        # a name cannot hold; the branch would put it somewhere else.
        return Reply(
            f'I read the step to add as "{name}", but {doubt}, so I changed nothing. Say '
            'where it goes with "after <step>" (e.g. "except when the referral is urgent, '
            'call the patient after check coverage"), or give its name in quotes.',
            asks=True,
        )
    key = derive_key(name)
    if key in view.by_key:
        return Reply(
            f'There is already a step "{view.name_of(key)}", so I changed nothing. To send '
            f'"{view.name_of(anchor)}" to it {condition.words()}, say "connect '
            f'{view.name_of(anchor)} to {view.name_of(key)} when …".',
            asks=True,
        )
    args = condition.args()
    edge = edge_args(
        anchor,
        key,
        args["condition_type"],
        args["condition_expression"],
        args.get("condition_label") or condition_text,
    )
    source = view.name_of(anchor)
    return Plan(
        [
            call("add_jobs", jobs=[{"name": name, "adaptor": adaptor}]),
            call("add_edges", edges=[edge]),
        ],
        f'One new branch: "{source}" → "{name}" {condition.words()} (only when "{source}" '
        f"succeeded), edge {anchor}->{key}; every other step and edge is unchanged.",
    )


def _to_existing(anchor: str, key: str, condition: Condition, said: str, view: View) -> Outcome:
    """ "also run <existing step> after <step> when …": one guarded edge, no new step."""
    if view.edge(anchor, key) is not None:
        return Reply(
            f'"{view.name_of(anchor)}" already goes to "{view.name_of(key)}"; to change when, '
            f'say "run {view.name_of(key)} only when …". I changed nothing.',
            asks=True,
        )
    args = condition.args()
    edge = edge_args(
        anchor, key, args["condition_type"], args["condition_expression"], condition.label or said
    )
    source, target = view.name_of(anchor), view.name_of(key)
    return Plan(
        [call("add_edges", edges=[edge])],
        f'One new branch: "{source}" → "{target}" {condition.words()} (only when "{source}" '
        f"succeeded), edge {anchor}->{key}; every other step and edge is unchanged.",
    )


def _condition(text: str) -> tuple[Condition, str] | None:
    """The condition a correction states and the words naming what it is about."""
    result = _RESULT.match(text)
    if result:
        phrase = f"the status is {result.group('value').strip(chr(39) + chr(34))}"
        rest = result.group("rest").strip()
        extra = _EXTRA.match(rest) if rest else None
        if rest and extra is None:
            return None
        if extra:
            phrase += f" and the {extra.group('flag').strip(chr(39) + chr(34))} is present"
        condition = require_clear(parse_condition(phrase))
        subject = result.group("subject")
    else:
        # "coverage is active but there is a copay-exception extension": each part a
        # condition, a flag that must be there, joined with "and".
        parts = _BUT.split(text)
        phrases = []
        for part in parts:
            extra = _EXTRA.match(part)
            if extra and part is not parts[0]:
                phrases.append(f"the {extra.group('flag').strip(chr(39) + chr(34))} is present")
            else:
                phrases.append(part)
        subject = re.split(r"\s+(?:is|are|has|have|was|were|equals|contains)\b", parts[0])[0]
        condition = require_clear(parse_condition(" and ".join(phrases)))
    if condition is None or condition.type != "js_expression":
        return None
    return condition, subject


def _anchor(subject: str, resolver: Resolver, view: View, condition: Condition) -> str:
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
    if isinstance(first, Ambiguous):
        raise NeedsAnswer(explain(first, view))
    raise NeedsAnswer(
        Reply(
            f"After which step should that branch start ({condition.words()})? I changed "
            'nothing. Say it again with "after <step>", e.g. "also email the supervisor '
            'after check coverage when the amount is over 500".',
            asks=True,
        )
    )


def _refuse(part: str) -> Reply:
    return Reply(
        f'I understood that you want a change, but not "{part}", so I changed nothing. Say it '
        'as "except when <field> is <value>, <step to add>", e.g. "except when the coverage '
        'comes back active with a copay exception, flag it for manual review".',
        asks=True,
    )
