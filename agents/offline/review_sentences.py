"""What a sentence about a person's review asks for when it is not a plain request for
one (:func:`agents.offline.gates.review` reads those): negated ("no supervisor needs to
approve"), hedged ("may optionally review"), several reviewers, a reviewer that is no noun
phrase, a clause after the subject; and taking an existing review step out."""

from __future__ import annotations

import re

from agents.offline.plan import Outcome, Reply
from agents.offline.references import Ambiguous, Found, NeedsAnswer, Resolver, explain
from agents.offline.view import View
from tools.edits.add_review_gate import REVIEW_CREDENTIAL

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

NEGATIVE_LEAD = re.compile(
    r"^(?:do\s+not|don[’']t|never|no\s+need\s+to|there\s+is\s+no\s+need\s+to|stop)\s+", re.I
)
# Patterns whose subject ends the clause ("<who> reviews <what>"): more after it is a
# clause of its own, never part of the subject.
TRAILING = frozenset({0, 3, 6, 7})
_AUX = re.compile(
    r"(?<![\w-])(?:[a-z]+n[’']t|is|are|was|were|be|been|do|does|did|has|have|had|shall|must|"
    r"should|would|will|need|needs|gets?|got|going|ought|to|used|longer|more)(?![\w-])",
    re.I,
)


def core(who: str) -> str:
    """The reviewer's words without the verb's company: "no supervisor" -> "supervisor",
    "manager doesn't need to" -> "manager", "supervisor may optionally" -> "supervisor"."""
    core = _AUX.sub(" ", who)
    core = _NEGATION.sub(" ", core)
    core = _HEDGE.sub(" ", core)
    core = re.sub(r"^\s*(?:of\s+)?(?:the|a|an|our|my|your|any)\s+", "", core, flags=re.I)
    return " ".join(core.split())


def doubt(
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
    what = what_said(" ".join(_HEDGE.sub(" ", _NEGATION.sub(" ", subject)).split()) or "the case")
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


def removal(text: str, view: View, resolver: Resolver) -> Outcome | None:
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


def what_said(raw: str) -> str:
    text = re.sub(r"^(?:the|a|an|this|that|their|its)\s+", "", raw.strip(), flags=re.I)
    if text.lower() in ("it", "them", "this", "that", ""):
        return "case"
    return " ".join(text.split())[:60]
