"""Precise or silent: a build the offline model is not sure of is never made.

Before a ``create_workflow`` plan leaves the offline model, the reading of the
text (:class:`~agents.offline.layout.Sop`) must pass these checks:

* every part of the text is accounted for (a step, an arm, the trigger, a reason,
  a hand-over to a later step); nothing was left over;
* every arm of a decision has a step;
* no step name is a clause fragment: it does not start with a condition or
  connective word (if, otherwise, when, because, whether, ...), it repeats no word
  twice in a row ("is is"), holds no possessive pronoun ("its", "their") and does
  not state a rule ("Cardiology needs an EKG report");
* every adaptor the text names explicitly ("with twilio", "over http",
  "(fhir)") is the one a step uses.

When a check fails nothing changes; the answer shows what was understood, as a
short plan, says what was not, and asks.
"""

from __future__ import annotations

import itertools
import re

from agents.offline import gates
from agents.offline.adaptor_words import explicit_adaptors
from agents.offline.grammar import words
from agents.offline.layout import Branch, Sop, Step
from agents.offline.plan import Reply

_FRAGMENT_START = frozenset(
    words(
        "if otherwise when whenever because whether unless since so else then and but or for "
        "as while until although though only at from to in into with by via on through using "
        "it them this that these those some any all none nothing something anything everything "
        "more less fewer much many several few"
    )
)


_RULE_VERBS = frozenset(words("need needs require requires"))
# A name that is only one of these says the run ends: an arm that stops, not a step.
_CONTROL_WORDS = frozenset(words("stop stops end ends halt halts abort quit exit finish done"))
_INSPECTING = frozenset(
    words("check checks verify validate confirm see determine ask find test inspect review")
)
_NUMBERS = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twice|several|many|a\s+few)"
# Words inside a name that say something a step cannot be: when or whether it runs, a
# choice, a negation, a loop or a retry, a wait, things at once, a credential. Each
# (pattern, why): the first that matches names the problem.
_INSIDE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), why)
    for pattern, why in (
        (
            r"(?<![\w-])(?:if|unless|except|excluding|only|until|till|whenever|when|otherwise|else"
            r"|while)(?![\w-])",
            "says when it runs",
        ),
        (
            r"(?<![\w-])(?:or|either|nor|maybe|optionally|optional|sometimes?|perhaps|possibly"
            r"|occasionally)(?![\w-])",
            "leaves a choice open",
        ),
        (
            r"(?<![\w-])(?:not|never|no|dont|don't|doesnt|cannot|cant|without|nothing|nobody"
            r"|neither)(?![\w-])",
            "says what not to do",
        ),
        (
            rf"(?<![\w-])(?:for\s+(?:each|every)|each\s+time|every\s+time|one\s+by\s+one|again"
            rf"|repeat(?:edly|s)?|retr(?:y|ies|ying)|loop(?:s|ing)?|{_NUMBERS}\s+times"
            r"|go(?:es)?\s+back|back\s+to\s+step|step\s+(?:\d+|one|two|three|four|five))(?![\w-])",
            "repeats or goes back (one run of a workflow does neither)",
        ),
        (
            r"^(?:wait|waits|sleep|delay|paus(?:e|es)\s+(?:for|until|till))(?![\w-])",
            "means waiting, and a run cannot wait for time to pass (a schedule starts a "
            "workflow later)",
        ),
        (
            r"(?<![\w-])(?:at\s+(?:the\s+)?same\s+time|in\s+parallel|simultaneously|concurrently"
            r"|meanwhile)(?![\w-])",
            "says two things happen at once",
        ),
        (r"\bcredentials?\b", "names a credential"),
    )
)
# Where a step goes, said inside what was read as its name: the placement was not read.
_PLACEMENT = re.compile(
    r"\b(?:after|before|between|following|behind|ahead\s+of|in\s+front\s+of|prior\s+to"
    r"|at\s+the\s+(?:very\s+)?(?:end|start|beginning|top|bottom)"
    r"|very\s+(?:first|last|end|start|beginning)|as\s+(?:the\s+)?(?:very\s+)?(?:first|last|final)"
    r"|(?:first|last|final)\s+(?:step|one|job)|(?:first|last)$)\b",
    re.I,
)
# A second step said in the same breath: "a Validate step and a Notify step".
_SECOND_STEP = re.compile(
    r"\b(?:and|plus|then)\s+(?:also\s+)?(?:an?|another|one\s+more|the)\s+(?:[\w-]+\s+){0,3}?"
    r"(?:step|job)\b|\b(?:step|job),?\s+(?:and|plus|then)\s+(?:also\s+)?(?:an?|another|the)\b",
    re.I,
)


def placement_problem(name: str) -> str | None:
    """Why ``name`` holds words that place or add a step rather than name it ("Audit after
    the one", "Log step at very end", "Validate step and a Notify"), or None."""
    second = _SECOND_STEP.search(name)
    if second:
        return f'it contains "{second.group(0)}", which reads as a second step'
    place = _PLACEMENT.search(name)
    if place:
        return f'it contains "{place.group(0)}", which says where the step goes'
    last = name.split()[-1].lower() if name.split() else ""
    if last in ("and", "or", "then", "but", "with", "to", "of", "the", "a", "an"):
        return f'it ends with "{name.split()[-1]}"'
    return None


def name_problem(name: str) -> str | None:
    """Why ``name`` reads as a piece of a sentence rather than a step name, or None.

    Every word of the name counts, not just the first: a condition, a choice, a
    negation, a loop, a wait or a credential anywhere in it was not read as what it is."""
    tokens = name.lower().split()
    if not tokens:
        return "it is empty"
    if tokens[0] in _FRAGMENT_START:
        return f'it starts with "{name.split()[0]}"'
    inner = re.search(r"\b(?:and|then)\s+(?:if|when|unless|otherwise)\b", name, re.I)
    if inner:
        return f'it contains "{inner.group(0)}"'
    for a, b in itertools.pairwise(tokens):
        if a == b:
            return f'it repeats "{a}"'
    # "Orthopedic referrals need imaging" states a rule (what a kind of thing needs), not a
    # step: a table of such rules is not a sequence of steps.
    rule = next((i for i, t in enumerate(tokens[:3]) if t in _RULE_VERBS), None)
    if rule in (1, 2):
        return f'it states a rule ("{" ".join(name.split()[: rule + 1])} …"), not a step'
    # A possessive pronoun left in a name stands for a thing the reading did not place
    # ("documents its referral": the rest of that clause went missing).
    pronoun = next((t for t in tokens[1:] if t in ("its", "their", "his", "her")), None)
    if pronoun:
        return f'it contains "{pronoun}"'
    # "Check if the patient is eligible" asks a question: "if" after a checking verb is fine.
    inspected = re.sub(
        r"^(\S+\s+)(?:if|whether)\b",
        lambda m: m.group(1) + "whether" if tokens[0] in _INSPECTING else m.group(0),
        name,
        flags=re.I,
    )
    return inside_problem(inspected)


def inside_problem(text: str) -> str | None:
    """Why words anywhere in ``text`` say what a step cannot be (a condition, a choice, a
    negation, a loop, a wait, things at once, a credential), or None."""
    for pattern, why in _INSIDE:
        found = pattern.search(text)
        if found:
            return f'it contains "{found.group(0)}", which {why}'
    if text.strip().lower() in _CONTROL_WORDS:
        return f'"{text.strip()}" ends the run, which is not a step'
    return None


def check_build(sop: Sop, text: str) -> Reply | None:
    """None when the reading is safe to build; otherwise the question to ask instead."""
    problems: list[str] = []
    for part in sop.unplaced:
        problems.append(f'I could not place "{part}".')
    problems.extend(sop.problems)
    if sop.steps_said is not None and sop.steps_said != len(sop.steps()):
        problems.append(
            f"You said {sop.steps_said} step{'s' if sop.steps_said != 1 else ''}, but I "
            f"understood {len(sop.steps())}."
        )
    for item in sop.items:
        if isinstance(item, Branch):
            for arm in item.arms:
                if not arm.steps and not arm.stop:
                    problems.append(f"Nothing is said to happen {arm.condition.words()}.")
    for step in sop.steps():
        why = name_problem(step.name)
        if why is not None:
            problems.append(f'"{step.name}" does not read as a step name ({why}).')
        if len(step.systems) > 1:
            both = " and ".join(sorted(step.systems))
            problems.append(
                f'"{step.name}" names {both}: a step uses one adaptor, so say it as one step '
                "for each system."
            )
    for step in _followed_person_steps(sop):
        problems.append(
            f'"{step.name}" is a person\'s review or escalation, and steps follow it: an '
            "OpenFn run cannot wait for a person. End the steps that run first with it "
            '("send the referral to the coordinator for review" after them), or use plan mode '
            "to build what follows as a workflow started by the decision."
        )
    used = {step.adaptor.split("@")[0] for step in sop.steps()}
    for word, short in explicit_adaptors(text):
        if short not in used:
            problems.append(f'You said "{word}", but no step I understood uses {short}.')
    if not problems:
        return None
    return Reply(
        "I'm not sure I understood all of that, so I changed nothing. This is what I "
        "understood:\n\n"
        + understood(sop)
        + "\n\n"
        + "\n".join(f"- {p}" for p in problems)
        + "\n\nTell me the part I missed in other words, or write the steps as a numbered "
        'list (one step per line; "If <field> is <value>, <step>" and "Otherwise <step>" '
        "for branches).",
        asks=True,
    )


def _followed_person_steps(sop: Sop) -> list[Step]:
    """Person steps (:func:`gates.person_step`) some step runs after in the same run."""
    found: list[Step] = []
    for index, item in enumerate(sop.items):
        later = index < len(sop.items) - 1
        runs: list[tuple[list[Step], bool]] = (
            [([item], later)]
            if isinstance(item, Step)
            else [(arm.steps, later and not arm.stop) for arm in item.arms]
            + [(item.otherwise, later)]
        )
        for steps, continues in runs:
            for position, step in enumerate(steps):
                followed = position < len(steps) - 1 or continues
                if followed and gates.person_step(step.name):
                    found.append(step)
    return found


def understood(sop: Sop) -> str:
    """The reading as a short plan, one line per step, arms indented."""
    lines: list[str] = []
    number = 0

    def shown(step: Step) -> str:
        said = [step.adaptor] if step.adaptor != "common" else []
        said += [f"credential {step.credential}"] if step.credential else []
        return f"{step.name} ({', '.join(said)})" if said else step.name

    for item in sop.items:
        number += 1
        if isinstance(item, Step):
            lines.append(f"{number}. {shown(item)}")
            continue
        lines.append(f"{number}. Then, depending on the result:")
        for arm in item.arms:
            steps = " → ".join(shown(s) for s in arm.steps) or "(nothing)"
            lines.append(f"   - {arm.condition.words()}: {steps}")
        if item.otherwise:
            # The same condition the build would put on the edge ("otherwise" for JS arms).
            word = "otherwise" if item.js_conditions() else item.rest_condition().words()
            lines.append(f"   - {word}: " + " → ".join(shown(s) for s in item.otherwise))
    if sop.trigger:
        kind = sop.trigger.get("type")
        cron = sop.trigger.get("cron_expression")
        lines.append(
            f"Trigger: {kind}"
            + (f" ({cron})" if cron else "")
            + (", enabled" if sop.enable else "")
        )
    if sop.reasons:
        lines.append("Reasons noted (not steps): " + "; ".join(f'"{r}"' for r in sop.reasons))
    return "\n".join(lines)
