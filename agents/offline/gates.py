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

from agents.offline.conditions import parse_condition, require_clear
from agents.offline.plan import Call, Outcome, Plan, Reply, call
from agents.offline.references import Ambiguous, Found, NeedsAnswer, Resolver, explain
from agents.offline.view import View
from tools.document.names import derive_key
from tools.edits.add_review_gate import REVIEW_CREDENTIAL

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

# What turns a review sentence into something other than a request for one. Word classes,
# matched as whole words (a hyphenated name such as "no-show list" is not a "no").
_NEGATION = re.compile(
    r"(?<![\w-])(?:no\s+one|no\s+longer|any\s+longer|any\s+more|used\s+to|no|not|never|"
    r"nobody|none|neither|nor|without|anymore|cannot|stop(?:s|ped)?|quits?)(?![\w-])"
    r"|n[’']t\b",
    re.I,
)
_HEDGE = re.compile(
    r"(?<![\w-])(?:may|might|maybe|perhaps|possibly|optionally|optional|sometimes|"
    r"occasionally|usually|typically|normally|generally|often|mostly|rarely|seldom|could|"
    r"can|ideally|preferably|probably|likely|either|"
    r"(?:if|when|where|as|whenever)\s+(?:needed|necessary|required|wanted|possible|"
    r"applicable|appropriate|desired|relevant|requested|they\s+(?:want|wish|like|choose)|"
    r"(?:he|she)\s+(?:wants|wishes|likes|chooses))|"
    r"at\s+(?:their|his|her|its)\s+(?:own\s+)?discretion|now\s+and\s+then|"
    r"from\s+time\s+to\s+time|(?:tries|try|wants?|would\s+like|hopes?|plans?)\s+to)(?![\w-])",
    re.I,
)
# Several reviewers in one: "the nurse and the doctor", "the manager or a deputy".
_SEVERAL = re.compile(
    r"(?<![\w-])(?:(?:and|or|nor|plus|&|as\s+well\s+as)\s+\S|both(?![\w-]))|,\s*\S", re.I
)
# Words a reviewer (a noun phrase: "data manager", "head of billing") never holds: verbs,
# auxiliaries and adverbs ("the supervisor then", "the manager quickly").
_NOT_A_NOUN = re.compile(
    r"(?<![\w-])(?:is|are|was|were|be|been|do|does|did|has|have|had|shall|must|should|"
    r"would|will|needs?|gets?|got|going|ought|to|also|then|first|now|just|still|only|even|"
    r"already|again|always|ever|once|later|soon|too|instead|together|alone|themselves|"
    r"himself|herself|and|or|nor|&|[a-z]+ly)\s*$",
    re.I,
)
# After the subject, a clause of its own: "... and then email the clinic", "... but only
# on mondays" (the subject of a trailing "<who> reviews <what>" is a noun phrase).
_CLAUSE = re.compile(
    r"\s*(?:,\s*|\s)(?=(?:and|then|but|or|so|if|unless|when|whenever|while|because|except|"
    r"until|though|although|once|as\s+long\s+as|provided|only|without)(?![\w-]))",
    re.I,
)
_THEN = re.compile(
    r"^(?:and\s+)?(?:then|after\s+that|afterwards)\b|^and\s+(?:also\s+)?then\b", re.I
)
# Taking a review out: "remove the review by the supervisor", "cancel the approval step".
_REMOVE = re.compile(
    r"^(?P<verb>remove|delete|cancel|drop|scrap|eliminate|get\s+rid\s+of|take\s+(?:out|away)|"
    r"do\s+away\s+with|stop|skip|bypass|omit|leave\s+out|disable|turn\s+off|switch\s+off)\s+"
    r"(?P<body>.+?)[.!]?$",
    re.I,
)
_PRECISE_REMOVE = re.compile(
    r"^(?:remove|delete|cancel|drop|scrap|eliminate|get\s+rid\s+of|take\s+(?:out|away)|"
    r"do\s+away\s+with)$",
    re.I,
)
_REVIEW_WORD = re.compile(
    r"(?<![\w-])(?:reviews?|reviewing|reviewers?|approvals?|approving|sign-?\s?offs?|signoffs?|"
    r"signing\s+off|escalations?|escalating)(?![\w-])",
    re.I,
)
_REVIEW_FILLER = frozenset(
    re.findall(
        r"\S+",
        "the a an this that these those its their our my step steps gate gates queue review "
        "reviews reviewing approval approvals approving sign signoff sign-off signoffs off "
        "escalation escalations escalating escalate by from of for to s manual human person "
        "people check checks",
    )
)


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
    removal = _removal(text, view, resolver)
    if removal is not None:
        return removal
    negated = _NEGATIVE_LEAD.match(text)
    said = text[negated.end() :] if negated else text
    found = next(
        ((i, m) for i, p in enumerate(REVIEW) if (m := p.match(said))),
        None,
    )
    if found is None:
        return None
    index, match = found
    core = _core(match.group("who"))
    if _NOT_A_PERSON.search(core):
        return None
    doubt = _doubt(text, match, core, view, trailing=index in _TRAILING, negated=bool(negated))
    if doubt is not None:
        return doubt
    who = _who(core)
    what = _what(match.group("what"))
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
    negated = _NEGATIVE_LEAD.match(text)
    said = text[negated.end() :] if negated else text
    match = next((m for p in ESCALATE if (m := p.match(said))), None)
    if match is None:
        return None
    core = _core(match.group("who"))
    if _NOT_A_PERSON.search(core):
        return None
    doubt = _doubt(
        text, match, core, view, trailing=False, negated=bool(negated), kind="escalation"
    )
    if doubt is not None:
        return doubt
    who = _who(core)
    groups = match.groupdict()
    what = _what(groups.get("what") or "the case")
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
_NEGATIVE_LEAD = re.compile(
    r"^(?:do\s+not|don[’']t|never|no\s+need\s+to|there\s+is\s+no\s+need\s+to|stop)\s+", re.I
)
# Patterns whose subject ends the clause ("<who> reviews <what>"): more after it is a
# clause of its own, never part of the subject.
_TRAILING = frozenset({0, 3, 6, 7})
_AUX = re.compile(
    r"(?<![\w-])(?:[a-z]+n[’']t|is|are|was|were|be|been|do|does|did|has|have|had|shall|must|"
    r"should|would|will|need|needs|gets?|got|going|ought|to|used|longer|more)(?![\w-])",
    re.I,
)


def _core(who: str) -> str:
    """The reviewer's words without the verb's company: "no supervisor" -> "supervisor",
    "manager doesn't need to" -> "manager", "supervisor may optionally" -> "supervisor"."""
    core = _AUX.sub(" ", who)
    core = _NEGATION.sub(" ", core)
    core = _HEDGE.sub(" ", core)
    core = re.sub(r"^\s*(?:of\s+)?(?:the|a|an|our|my|your|any)\s+", "", core, flags=re.I)
    return " ".join(core.split())


def _doubt(
    text: str,
    match: re.Match[str],
    core: str,
    view: View,
    *,
    trailing: bool,
    negated: bool,
    kind: str = "review",
) -> Reply | None:
    """Why a sentence that names a review is not a request to add one, as the answer:
    negated, hedged, several reviewers, a reviewer that is no noun phrase, or a clause
    after the subject. None when it is a plain request."""
    groups = match.groupdict()
    who_raw = " ".join(groups["who"].split())
    raw_what = " ".join((groups.get("what") or "").split())
    subject, rest = raw_what, ""
    if trailing:
        cut = _CLAUSE.search(raw_what)
        if cut:
            subject, rest = raw_what[: cut.start()], raw_what[cut.end() :].strip(" ,")
    # The subject, said back without the words that negate or hedge it ("... anymore").
    what = _what(" ".join(_HEDGE.sub(" ", _NEGATION.sub(" ", subject)).split()) or "the case")
    who = f"the {core}" if core else "anyone"
    if negated or _NEGATION.search(who_raw) or _NEGATION.search(subject):
        by = "to" if kind == "escalation" else "by"
        return Reply(
            f"I read that as: no {kind} of the {what} {by} {who}. That asks for nothing to "
            f"be added, so I changed nothing.{_existing(view, core)}",
            asks=True,
        )
    hedge = _HEDGE.search(who_raw) or _HEDGE.search(raw_what)
    if hedge:
        return Reply(
            f"I understood a review of the {what} by {who}, but only sometimes "
            f'("{hedge.group(0)}"). A review step runs every time the step before it '
            "succeeds, so I changed nothing. For a review every time, say "
            f'"send the {what} to {who} for review after <step>"; for one under a '
            f'condition, "escalate the {what} to {who} when <field> is <value>".',
            asks=True,
        )
    if _SEVERAL.search(core):
        return Reply(
            f'I understood a review of the {what} by more than one reviewer ("{core}"). A '
            "review step sends the case to one reviewer, a person or a team, so I changed "
            f'nothing. Name one, e.g. "send the {what} to the <reviewer> for review after '
            '<step>", or the team that reviews it.',
            asks=True,
        )
    if not core or _NOT_A_NOUN.search(core):
        return Reply(
            f'I understood a review of the {what}, but not who reviews it ("{who_raw}"). Say '
            f'e.g. "send the {what} to the supervisor for review after <step>". I changed '
            "nothing.",
            asks=True,
        )
    if rest:
        after = groups.get("after")
        where = f" after {after}" if after else ""
        if _THEN.match(rest):
            step = _THEN.sub("", rest).strip(" ,")
            return Reply(
                f'I understood: {who} reviews the {what}{where}, then "{step}". An OpenFn '
                "run cannot pause for a person, so what comes after the review would run in "
                "a workflow of its own, started by the decision; I changed nothing. Plan mode "
                "(a project) builds both workflows. To only raise the review here, say "
                f'"send the {what} to {who} for review{where}".',
                asks=True,
            )
        return Reply(
            f'I understood a review of the {what} by {who}{where}, but not "{rest}", so I '
            f'changed nothing. Say it as "send the {what} to {who} for review after <step>", '
            'or as an escalation with a condition ("escalate the '
            f'{what} to {who} when <field> is <value>").',
            asks=True,
        )
    return None


def _review_steps(view: View) -> list[str]:
    """The steps that send a case to the review queue (a gate's raise part)."""
    return [k for k, j in view.by_key.items() if j.get("credential") == REVIEW_CREDENTIAL]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _existing(view: View, core: str) -> str:
    """What the workflow already has that a "no review" sentence may be about."""
    steps = [k for k in _review_steps(view) if _words(core) <= _words(view.name_of(k))]
    if not steps:
        return ""
    names = ", ".join(f'"{view.name_of(k)}"' for k in steps)
    return (
        f" The workflow has the review step {names}; to take it out, say "
        f'"remove {view.name_of(steps[0])}".'
    )


def _removal(text: str, view: View, resolver: Resolver) -> Outcome | None:
    """Taking a review out ("remove the review by the supervisor"): the one review step of
    that reviewer goes (``remove_jobs``, as "remove <step>" does); else it says what there is."""
    match = _REMOVE.match(text)
    if match is None or not _REVIEW_WORD.search(match.group("body")):
        return None
    body = match.group("body").strip()
    every = _review_steps(view)
    named = resolver.resolve(body)
    if isinstance(named, Found) and named.key not in every:
        return None  # another step's own name: the remove rule's
    verb = " ".join(match.group("verb").lower().split())
    gates = [named.key] if isinstance(named, Found) else every
    said, anchor = body, None
    place = re.match(r"^(?P<said>.+?)\s+(?:after|following)\s+(?P<step>.+)$", body, re.I)
    if place:
        said, anchor = place.group("said"), resolver.require(place.group("step"))
        gates = [k for k in gates if any(e.source == anchor for e in view.in_edges(k))]
    words = {w for w in _words(said) if w not in _REVIEW_FILLER}
    matching = [k for k in gates if words <= _words(view.name_of(k))]
    understood = f'I understood: {verb} "{body}".'
    if not every:
        return Reply(
            f"{understood} This workflow has no review step (one that sends the case to the "
            "review queue), so there is nothing to take out; I changed nothing.",
            asks=True,
        )
    if not matching:
        names = ", ".join(f'"{view.name_of(k)}"' for k in every)
        what = f'"{said}"' + (f' after "{view.name_of(anchor)}"' if anchor else "")
        return Reply(
            f"{understood} No review step matches {what}: the workflow's review steps are "
            f'{names}. To take one out, say "remove <step>"; I changed nothing.',
            asks=True,
        )
    if len(matching) > 1:
        raise NeedsAnswer(explain(Ambiguous(body, tuple(matching)), view))
    name = view.name_of(matching[0])
    if not _PRECISE_REMOVE.match(verb):
        return Reply(
            f"{understood} A review step runs every time; it cannot be skipped or paused on "
            f'its own. To take "{name}" out, say "remove {name}"; I changed nothing.',
            asks=True,
        )
    # Imported here, not at the top: edits checks new names with plausibility, which
    # asks this module what a person's step is, so a top-level import would be a cycle.
    from agents.offline import edits

    return edits.remove(f"remove {matching[0]}", view, resolver)


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


def _what(raw: str) -> str:
    text = re.sub(r"^(?:the|a|an|this|that|their|its)\s+", "", raw.strip(), flags=re.I)
    if text.lower() in ("it", "them", "this", "that", ""):
        return "case"
    return " ".join(text.split())[:60]
