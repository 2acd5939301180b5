"""Human review gates and escalations, as experts say them (``add_review_gate``).

Review: a person reviews, approves or signs off on something, possibly before a step:
"a coordinator reviews the referral before scheduling", "the referral must be approved
by a supervisor before it is submitted", "send it to the manager for sign-off", "have
the nurse approve the order". Escalation: "if the coverage is not active, escalate to
the supervisor", "escalate to the billing team when check coverage fails", "escalate
it to the coordinator after check coverage".

What it does with them, precisely or not at all:

* A review *before a step* means that step and what follows wait for the decision. An
  OpenFn run cannot pause, so in one workflow that is two workflows (plan mode builds
  them); here it changes nothing and says so, naming the step the review would follow.
* A review at the end (after a named step, or after the workflow's only last step) is
  the gate's ``raise`` part: one step posting the case to the review queue.
* An escalation is the ``raise`` part on a branch: on the step's failure, or behind the
  condition (with the success guard), beside the step's other branches.

A reviewer is a person or team ("coordinator", "billing team"), never the system,
the workflow or a pronoun; a sentence that only looks like one is left to other rules.

A review sentence that does not ask for a review changes nothing and says what it
understood: a negated one ("no supervisor needs to approve the batch", "the manager no
longer reviews it"), a hedged one ("the supervisor may review the batch", "... if
needed": a review step runs every time), one with several reviewers, a reviewer that is
not a noun ("the supervisor quickly"), or one with more after the subject ("... and then
email the clinic": that step would wait for the decision). Removing a review ("remove the
review by the supervisor") removes the one review step (credential ``review-queue``) of
that reviewer with ``remove_jobs``, like "remove <step>"; with none or several it says so.
"""

from __future__ import annotations

import re

from agents.offline import review_sentences as sentences
from agents.offline.conditions import parse_condition, require_clear
from agents.offline.plan import Call, Outcome, Plan, Reply, call
from agents.offline.references import Found, NeedsAnswer, Resolver, explain
from agents.offline.view import View
from tools.document.names import derive_key

_ART = r"(?:the|a|an|our|my|your)\s+"
_WHO = (
    r"(?!(?:have|let|get|send|route|pass|hand|forward|submit|give|please|if|when|escalate)\b)"
    r"(?P<who>[a-z][a-z'’ -]{1,40}?)"
)
_REVIEW_VERB = r"(?:reviews?|approves?|signs?\s+off\s+on|looks?\s+over|vets?)"
_REVIEW_NOUN = r"(?:review|approval|sign-?\s?off|a\s+decision|a\s+second\s+look)"
_PARTICIPLE = r"(?:reviewed|approved|signed\s+off|vetted|okayed|checked\s+by\s+a\s+person)"
_BEFORE = r"(?:\s+before\s+(?P<next>[^.;!?\n]+?))?"
_AFTER = r"(?:\s+(?:after|once)\s+(?P<after>[^.;!?\n]+?))?"
_MODAL = r"(?:(?:must|should|will|has\s+to|needs\s+to|have\s+to|always)\s+)?"

REVIEW = (
    # "a coordinator reviews the referral before scheduling"
    re.compile(
        rf"^(?:{_ART})?{_WHO}\s+{_MODAL}{_REVIEW_VERB}\s+(?P<what>[^.;!?\n]+?){_AFTER}{_BEFORE}[.!]?$",
        re.I,
    ),
    # "the referral must be approved by a supervisor before it is submitted"
    re.compile(
        rf"^(?P<what>[^.;!?\n]+?)\s+(?:must|should|has\s+to|needs\s+to|is\s+to)\s+be\s+{_PARTICIPLE}"
        rf"\s+by\s+(?:{_ART})?{_WHO}{_AFTER}{_BEFORE}[.!]?$",
        re.I,
    ),
    # "send it to the manager for sign-off after check coverage"
    re.compile(
        rf"^(?:send|route|pass|hand|forward|submit|give)\s+(?P<what>[^.;!?\n]+?)\s+to\s+(?:{_ART})?{_WHO}"
        rf"\s+for\s+(?:(?:a|their|his|her)\s+)?{_REVIEW_NOUN}{_AFTER}{_BEFORE}[.!]?$",
        re.I,
    ),
    # "before it is scheduled, a coordinator reviews the referral"
    re.compile(
        rf"^before\s+(?P<next>[^,]+?),\s*(?:{_ART})?{_WHO}\s+{_MODAL}{_REVIEW_VERB}\s+"
        r"(?P<what>[^.;!?\n]+?)[.!]?$",
        re.I,
    ),
    # "the records need sign-off from the data manager"
    re.compile(
        rf"^(?P<what>[^.;!?\n]+?)\s+(?:needs?|requires?)\s+(?:(?:a|an)\s+)?{_REVIEW_NOUN}\s+"
        rf"(?:from|by)\s+(?:{_ART})?{_WHO}{_AFTER}{_BEFORE}[.!]?$",
        re.I,
    ),
    # "get the supervisor's approval after upsert records"
    re.compile(
        rf"^(?:get|obtain|ask\s+for|request)\s+(?:{_ART})?{_WHO}(?:'s|’s)\s+{_REVIEW_NOUN}"
        rf"(?P<what>){_AFTER}{_BEFORE}[.!]?$",
        re.I,
    ),
    # "once the records are upserted, the manager approves them"
    re.compile(
        rf"^(?:once|after|when)\s+(?P<after>[^,]+?),\s*(?:{_ART})?{_WHO}\s+{_MODAL}{_REVIEW_VERB}"
        r"\s+(?P<what>[^.;!?\n]+?)[.!]?$",
        re.I,
    ),
    # "have the nurse approve the order before it ships"
    re.compile(
        rf"^(?:have|let|get)\s+(?:{_ART})?{_WHO}\s+(?:review|approve|sign\s+off\s+on|look\s+over)"
        rf"\s+(?P<what>[^.;!?\n]+?){_AFTER}{_BEFORE}[.!]?$",
        re.I,
    ),
)
ESCALATE = (
    re.compile(
        rf"^(?:if|when|whenever)\s+(?P<cond>[^.;!?\n]+?),?\s+(?:then\s+)?escalate\s+(?:(?P<what>it|this|"
        rf"that|them|the\s+[\w -]+?)\s+)?to\s+(?:{_ART})?{_WHO}{_AFTER}[.!]?$",
        re.I,
    ),
    re.compile(
        rf"^escalate\s+(?:(?P<what>it|this|that|them|the\s+[\w -]+?)\s+)?to\s+(?:{_ART})?{_WHO}"
        rf"(?:\s+(?:if|when|whenever)\s+(?P<cond>[^.;!?\n]+?))?{_AFTER}[.!]?$",
        re.I,
    ),
)
_NOT_A_PERSON = re.compile(
    r"\b(?:it|this|that|they|we|i|you|is|are|was|system|workflow|tool|code|step|script|bot|"
    r"app|what|who|how|which|why|does|do|can|could|would|should|will)\b",
    re.I,
)
_QUESTION = re.compile(
    r"^(?:what|how|is|are|does|do|can|could|would|should|will|why|which|who|where)\b|\?\s*$",
    re.I,
)
_FAILS = re.compile(r"^(?P<step>.+?)\s+(?:fails|errors|errors\s+out|breaks|goes\s+wrong)$", re.I)


_PERSON_STEP = re.compile(
    rf"^(?!(?:system|workflow|tool|code|script|bot|app)\b)[a-z][a-z-]*(?:\s+[a-z-]+)?\s+"
    rf"{_REVIEW_VERB}\b"
    r"|^escalate\b"
    r"|^(?:get|obtain|wait\s+for|await)\s+(?:the\s+|an?\s+)?[\w -]*?"
    r"(?:approval|sign-?\s?off|review|decision)\b",
    re.I,
)


def person_step(name: str) -> bool:
    """Whether a step name (as a build reads it) is a person's review, approval or an
    escalation ("Coordinator reviews referral", "Escalate to supervisor", "Get manager
    approval"): a run cannot wait for it, so no step may follow it in the same run."""
    return bool(_PERSON_STEP.match(name.strip()))


def review(text: str, view: View, resolver: Resolver) -> Outcome | None:
    text = text.strip()
    if _QUESTION.search(text):
        return None
    removal = sentences.removal(text, view, resolver)
    if removal is not None:
        return removal
    negated = sentences.NEGATIVE_LEAD.match(text)
    said = text[negated.end() :] if negated else text
    found = next(
        ((i, m) for i, p in enumerate(REVIEW) if (m := p.match(said))),
        None,
    )
    if found is None:
        return None
    index, match = found
    core = sentences.core(match.group("who"))
    if _NOT_A_PERSON.search(core):
        return None
    doubt = sentences.doubt(
        text, match, core, view, trailing=index in sentences.TRAILING, negated=bool(negated)
    )
    if doubt is not None:
        return doubt
    who = _who(core)
    what = sentences.what_said(match.group("what"))
    if not view.jobs:
        return Reply(
            f"I understood a review by the {who}, but the workflow has no steps yet, so there "
            "is nothing to review; I changed nothing. Describe the steps first.",
            asks=True,
        )
    groups = match.groupdict()
    if groups.get("next"):
        waiting = _step(groups["next"], resolver, view)
        return _two_workflows(who, what, waiting, view)
    anchor = _anchor(groups.get("after"), resolver, view, who)
    onward = [
        e.target
        for e in view.out_edges(anchor)
        if e.condition_type in ("on_job_success", "always") and e.enabled
    ]
    if onward:
        return _two_workflows(who, what, onward[0], view)
    return Plan(
        [_raise(view, who, what, anchor)],
        f'Adding a review by the {who} after "{view.name_of(anchor)}": a step posts the '
        f"{what} to the review queue, and the decision comes back on a webhook of its own.",
    )


def escalate(text: str, view: View, resolver: Resolver) -> Outcome | None:
    text = text.strip()
    if text.endswith("?"):
        return None
    negated = sentences.NEGATIVE_LEAD.match(text)
    said = text[negated.end() :] if negated else text
    match = next((m for p in ESCALATE if (m := p.match(said))), None)
    if match is None:
        return None
    core = sentences.core(match.group("who"))
    if _NOT_A_PERSON.search(core):
        return None
    doubt = sentences.doubt(
        text, match, core, view, trailing=False, negated=bool(negated), kind="escalation"
    )
    if doubt is not None:
        return doubt
    who = _who(core)
    groups = match.groupdict()
    what = sentences.what_said(groups.get("what") or "the case")
    if not view.jobs:
        return Reply(
            f"I understood an escalation to the {who}, but the workflow has no steps yet; "
            "I changed nothing.",
            asks=True,
        )
    cond = (groups.get("cond") or "").strip()
    if not cond:
        if not groups.get("after"):
            return Reply(
                f"I understood an escalation to the {who}, but not when it should happen: "
                'say "escalate to the <who> when <step> fails", "... if <field> is <value>" '
                'or "... after <step>". I changed nothing.',
                asks=True,
            )
        return review(
            f"send {what} to the {who} for review after {groups['after']}", view, resolver
        )
    after = groups.get("after")
    failing = _FAILS.match(cond)
    if failing:
        anchor = _step(after or failing.group("step"), resolver, view)
        gate = _raise(view, who, what, anchor, on_failure=True)
        words = f'when "{view.name_of(anchor)}" fails'
    else:
        condition = require_clear(parse_condition(cond))
        if condition is None or condition.type != "js_expression":
            return Reply(
                f'I understood an escalation to the {who}, but not the condition "{cond}"; '
                'say it as "<field> is <value>" or "<step> fails". I changed nothing.',
                asks=True,
            )
        subject = re.split(r"\s+(?:is|are|has|have|was|were|equals|contains)\b", cond)[0]
        found = _step(after, resolver, view) if after else _subject_step(subject, resolver)
        if found is None:
            return Reply(
                f"I understood an escalation to the {who} when {condition.words()}, but not "
                'after which step to check it; I changed nothing. Say "..., escalate to the '
                f'{who} after <step>".',
                asks=True,
            )
        anchor = found
        gate = _raise(view, who, what, anchor, when=condition.expression)
        words = f'after "{view.name_of(anchor)}", {condition.words()}'
    return Plan(
        [gate],
        f"Adding an escalation to the {who} {words}: a step posts the {what} to the review "
        "queue; the workflow's other paths are unchanged.",
    )


# "don't send it to the manager for review", "never escalate to the supervisor ...": the
# sentence after it is read for what it names, and nothing is added.


def resume_path(view: View, who: str) -> str:
    """The webhook path the decision comes back to: '<workflow>-<who>-review'."""
    return derive_key(f"{view.name or 'workflow'} {who} review")[:80].strip("-") or "review"


def _raise(
    view: View,
    who: str,
    what: str,
    after: str,
    *,
    when: str | None = None,
    on_failure: bool = False,
) -> Call:
    return call(
        "add_review_gate",
        part="raise",
        reviewer=who,
        subject=what,
        resume_path=resume_path(view, who),
        after=after,
        when=when,
        on_failure=on_failure or None,
    )


def _two_workflows(who: str, what: str, waiting: str, view: View) -> Reply:
    before = [e.source for e in view.in_edges(waiting) if e.source in view.by_key]
    where = f' after "{view.name_of(before[0])}"' if len(before) == 1 else ""
    return Reply(
        f'I understood: the {who} reviews the {what} before "{view.name_of(waiting)}". An '
        f'OpenFn run cannot pause for a person, so "{view.name_of(waiting)}" and what follows '
        "would run in a workflow of its own, started by the decision (approved, rejected or "
        "corrected); I changed nothing. Plan mode (a project) builds both workflows and "
        f"stores the decision's contract. To only raise the review here{where}, move or "
        f'remove what follows and say "send the {what} to the {who} for review'
        + (f' after {view.name_of(before[0])}".' if len(before) == 1 else '".'),
        asks=True,
    )


def _anchor(after: str | None, resolver: Resolver, view: View, who: str) -> str:
    if after:
        return _step(after, resolver, view)
    leaves = view.leaves()
    if len(leaves) == 1:
        return leaves[0]
    raise NeedsAnswer(
        Reply(
            f"After which step does the {who} review it? The workflow ends in several steps: "
            + ", ".join(f'"{view.name_of(k)}"' for k in leaves)
            + ". Nothing was changed.",
            asks=True,
        )
    )


def _step(phrase: str, resolver: Resolver, view: View) -> str:
    """The step a phrase names: "scheduling", "it is submitted", "the coverage check",
    "the referral is verified" (a passive names the step by its verb and object),
    "verifying it"; asks when none (or several) fit."""
    cleaned = re.sub(
        r"^(?:it|they|this|that)\s+(?:is|are|gets?|can\s+be|goes)\s+",
        "",
        phrase.strip(),
        flags=re.I,
    )
    cleaned = re.sub(r"^(?:the|a|an)\s+", "", cleaned, flags=re.I)
    cleaned = re.sub(r"\s+(?:it|them|this|that)$", "", cleaned, flags=re.I)
    candidates = [cleaned, re.sub(r"\s+(?:check|step|result|lookup)$", "", cleaned, flags=re.I)]
    passive = re.match(
        r"^(?P<object>.+?)\s+(?:is|are|gets?|get|was|were)\s+(?P<verb>\w+)$", cleaned
    )
    if passive:
        candidates += [f"{passive['verb']} {passive['object']}", passive["verb"]]
    first = resolver.resolve(cleaned)
    for candidate in candidates:
        found = resolver.resolve(candidate)
        if isinstance(found, Found):
            return found.key
    if isinstance(first, Found):  # not reached: the first candidate is ``cleaned`` itself
        return first.key
    raise NeedsAnswer(explain(first, view))


def _subject_step(subject: str, resolver: Resolver) -> str | None:
    """The step a condition's subject names ("the coverage" -> Check coverage), if one."""
    cleaned = re.sub(r"^(?:the|a|an)\s+", "", subject.strip(), flags=re.I)
    for phrase in (cleaned, re.sub(r"\s+(?:check|step|result|lookup)$", "", cleaned, flags=re.I)):
        found = resolver.resolve(phrase)
        if isinstance(found, Found):
            return found.key
    return None


def _who(raw: str) -> str:
    return " ".join(raw.lower().split())
