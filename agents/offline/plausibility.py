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
        "as while until although though"
    )
)


_RULE_VERBS = frozenset(words("need needs require requires"))


def name_problem(name: str) -> str | None:
    """Why ``name`` reads as a piece of a sentence rather than a step name, or None."""
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
    return None


def check_build(sop: Sop, text: str) -> Reply | None:
    """None when the reading is safe to build; otherwise the question to ask instead."""
    problems: list[str] = []
    for part in sop.unplaced:
        problems.append(f'I could not place "{part}".')
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
        return step.name if step.adaptor == "common" else f"{step.name} ({step.adaptor})"

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
        lines.append(f"Trigger: {kind}" + (f" ({cron})" if cron else ""))
    if sop.reasons:
        lines.append("Reasons noted (not steps): " + "; ".join(f'"{r}"' for r in sop.reasons))
    return "\n".join(lines)
