"""Rules on the whole message, tried first: greeting, undo, start over, building.

Building (a description, a numbered or bulleted list, an SOP in prose) is parsed by
:mod:`agents.offline.build`; it only builds on an empty workflow.
"""

from __future__ import annotations

import re

from agents.offline import build, corrections, knowledge, processes
from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.references import NeedsAnswer
from agents.offline.rules.base import Example, Rule, Turn, attempt, patterns
from agents.offline.view import Scratch

_GREETING = patterns(r"^(?:hi|hello|hey|help|what can you do|\?)?$")
_UNDO = patterns(r"^(?:undo|revert|roll\s*back|go\s+back)\b.*$")
_START_OVER = (
    re.compile(
        r"^(?:let'?s\s+)?(?:start\s+(?:over|again|from\s+scratch|fresh)|clear\s+(?:the\s+|this\s+)?"
        r"(?:workflow|everything|all(?:\s+(?:the\s+)?steps)?|steps)|(?:delete|remove|wipe|erase)\s+"
        r"(?:everything|all\s+(?:the\s+|of\s+the\s+)?(?:steps|jobs)|every\s+step|the\s+whole\s+"
        r"workflow)|reset(?:\s+(?:the|this)\s+workflow)?|scrap\s+(?:it|everything|this))\b"
        r"[\s,.:;-]*(?:and\s+|then\s+)*(?P<rest>.*)$",
        re.I | re.S,
    ),
)


def capabilities() -> str:
    from agents.offline.rules.docs import capabilities as rendered

    return rendered()


def _greeting(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome:
    return Reply(capabilities())


def _undo(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome:
    return Reply(
        "I can't undo offline, but every change is saved as a version: open the version "
        "history and revert to the version before it (a revert is itself a new version). "
        "Nothing was changed."
    )


def _start_over(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome:
    """Remove every step; what follows ("and create a workflow that ...") runs on the
    emptied copy in the same turn."""
    assert match is not None
    first: Plan = Plan([])
    if turn.view.jobs:
        first = Plan([call("remove_jobs", keys=[j["key"] for j in turn.view.jobs])])
        attempt(first, turn.scratch)
    rest = match.group("rest").strip()
    if not rest:
        if not first.calls:
            return Reply("The workflow is already empty. What should it do?")
        return first
    following = turn.compile(rest, turn.scratch, None, turn.now)
    if following is None:
        return Reply(
            f'I understood "start over" but not "{rest}", so I changed nothing.\n\n'
            + capabilities()
        )
    if isinstance(following, Reply):
        return following
    return first + following


def _build(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    sop = build.looks_like_sop(text)
    if build.is_build_request(text) or (
        sop and (not turn.view.jobs or build.starts_with_arrival(text))
    ):
        return build.parse_build(text, turn.view)
    return None


def _knowledge(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    return knowledge.refuse(turn.said or text)


def _several_processes(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    return processes.offer(turn.said or text)


def _correction(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    outcome = corrections.correct(turn.said or text, turn.view, turn.resolver)
    if isinstance(outcome, Reply):
        # A correction beside sentences that are requests of their own ("rename A to B.
        # Also …") is not a correction in a story: the commands read the message instead
        # (each probed on a scratch copy of its own, so nothing is tried twice).
        for other in outcome.meta.get("others") or ():
            try:
                probe = turn.compile(other, Scratch(turn.view.raw), turn.current, turn.now)
            except NeedsAnswer:
                continue
            if isinstance(probe, Plan):
                return None
    return outcome


_NUMBERED = (
    "create a workflow called Intake:\n1. Fetch patients from dhis2\n2. Transform the data\n"
    "3. Upsert the records to postgres"
)
_BRANCHES = (
    "Create a workflow called Referral intake:\n1. Pull the referral from Epic\n"
    "2. Check the insurance\n3. If the plan is BlueCross HMO, submit a prior-auth request "
    "through the payer portal\n4. Otherwise verify the coverage is active\n"
    "5. Attach the clinical documents"
)

RULES = [
    Rule(
        "greeting",
        "other",
        "message",
        _greeting,
        _GREETING,
        (
            Example(
                "what can you do",
                "lists what it understands (the answer to anything it does not)",
                also=("help", "hello"),
                says=("rename A to B", "ANTHROPIC_API_KEY"),
            ),
        ),
    ),
    Rule(
        "undo",
        "other",
        "message",
        _undo,
        _UNDO,
        (
            Example(
                "undo",
                "explains that every change is a version you can revert to",
                also=("roll back the last change",),
                says=("revert",),
            ),
        ),
    ),
    Rule(
        "start_over",
        "other",
        "message",
        _start_over,
        _START_OVER,
        (
            Example(
                "start over",
                "`remove_jobs` with every step",
                also=("clear the workflow", "delete everything"),
                tools=("remove_jobs",),
                menu="start over",
            ),
            Example(
                "start over and create a workflow that fetches patients from dhis2 and then "
                "upserts them to postgres",
                "`remove_jobs`, then builds the new workflow in the same turn",
                tools=("remove_jobs", "create_workflow"),
            ),
        ),
        tried=False,
    ),
    Rule(
        "several processes",
        "other",
        "message",
        _several_processes,
        (),
        (
            Example(
                "## Intake\n- Fetch the referral from the portal over http\n- Save the "
                "referral\n## Status report\nEvery weekday at 7.\n- Fetch the open referrals "
                "over http\n- Post the summary to the team channel over http",
                "a section per process, in an editing session: `offer_plan_mode` with their "
                "names; nothing changes and the reply offers plan mode (`offer: plan`)",
                ("offer_plan_mode",),
                doc="empty",
                says=("2 separate processes", "nothing was changed"),
            ),
        ),
    ),
    Rule(
        "correction",
        "steps",
        "message",
        _correction,
        (),
        (
            Example(
                "that's right, except when the coverage comes back active with a copay "
                "exception, flag it for manual review",
                "a follow-up correction: `add_jobs` + one `add_edges` from the step the "
                "condition is about (here Check coverage), on `!state.errors?.[upstreamStepId] "
                "&& (state.data.status === 'active' && Boolean(state.data.copayException))`; "
                "nothing else changes and the reply names the edge",
                ("add_jobs", "add_edges"),
                also=(
                    "That's right, except when the coverage check returns `active` but there's a "
                    "`copay-exception` extension, you need to flag it for manual review.",
                ),
                says=("Flag for manual review", "Check coverage", "unchanged"),
            ),
            Example(
                "also email the supervisor after check coverage when the amount is over 500",
                'the same with "also": `add_jobs` + one `add_edges` from the step named, on '
                "`!state.errors?.[upstreamStepId] && (state.data.amount > 500)`",
                ("add_jobs", "add_edges"),
                says=("Email supervisor", "Check coverage", "unchanged"),
            ),
            Example(
                "any ortho referral with a plan code starting with PPO- also needs prior auth, "
                "not just the BlueCross plans",
                "a rule change: one guarded `add_edges` from the nearest decision before that "
                'step ("ortho referral": the referral type is ortho, said in the reply); a '
                "sentence it cannot place beside the rule changes nothing and says why",
                ("add_edges",),
                doc="linda",
                also=("Now any ortho referral with a copay exception also needs prior auth.",),
                says=("Submit prior-auth request", "referral type", "unchanged"),
            ),
            Example(
                "any referral with a plan code starting with HMO- also needs the prior-auth "
                "request",
                "when that decision already goes to the step: `update_edges` widening its "
                "condition: the old check or the new one, behind the same success guard",
                ("update_edges",),
                doc="branching",
                says=("One rule changed", "unchanged"),
            ),
        ),
    ),
    Rule(
        "build",
        "build",
        "message",
        _build,
        (),
        (
            Example(
                "create a workflow that gets referrals from http, checks coverage with fhir, then "
                "emails the coordinator with gmail, every weekday at 7",
                "`create_workflow`: Get referrals (http) → Check coverage (fhir) → Email "
                "coordinator (gmail), cron `0 7 * * 1-5`",
                doc="empty",
                tools=("create_workflow",),
                cron="0 7 * * 1-5",
                menu="create a workflow that gets referrals from http, checks coverage with fhir, "
                "then emails the coordinator with gmail, every weekday at 7",
            ),
            Example(
                _NUMBERED,
                "one step per line (numbered or bulleted), chained on success",
                doc="empty",
                tools=("create_workflow",),
                says=("Intake",),
            ),
            Example(
                "First I pull up the referral in Epic and check the insurance. If it's BlueCross, "
                "I submit a prior-auth request. For everything else, I verify the coverage is "
                "active.",
                'an SOP in prose: sentences, "then", "finally", "and <verb>" split steps',
                doc="empty",
                tools=("create_workflow",),
            ),
            Example(
                _BRANCHES,
                "JS edges `state.data.plan === 'BlueCross HMO'` (label \"BlueCross HMO\") and "
                "`state.data.plan !== 'BlueCross HMO'`, each behind the success guard "
                "`!state.errors?.[upstreamStepId] && (…)`",
                doc="empty",
                tools=("create_workflow",),
            ),
            Example(
                "1) Get orders from the shop API\n2) Save them in mysql\n3) If that fails, email "
                "the ops team\n4) Send a confirmation sms",
                'an on-failure edge from the step before ("if that fails", "on failure")',
                doc="empty",
                tools=("create_workflow",),
            ),
            Example(
                "when a lab result arrives, parse it, if it fails alert the lab team via sms, "
                "otherwise store it in postgres",
                'webhook trigger; "it"/"them" become the thing named earlier ("Parse lab result")',
                doc="empty",
                tools=("create_workflow",),
            ),
            Example(
                "Daily sync (every day at seven):\n- fetch patients from dhis2 using the "
                "dhis2-prod credential\n- upsert them to postgres",
                "the title names the workflow and its brackets hold the schedule (a time in "
                'words is read); "using the X credential" is `attach_credential` on that step',
                doc="empty",
                tools=("create_workflow", "attach_credential"),
                cron="0 7 * * *",
                says=("Daily sync",),
            ),
        ),
    ),
    Rule(
        "knowledge",
        "build",
        "message",
        _knowledge,
        (),
        (
            Example(
                "Maria knows which documents each referral type needs. Orthopedic referrals "
                "need recent imaging. Cardiology needs an EKG report and recent labs. The tool "
                "checks `DocumentReference` resources against those requirements.",
                "rules, not steps (seed 000's Maria and James): changes nothing and says back "
                "the rules as a table, what the tool should do, the FHIR resources it names "
                "and what it needs to build it",
                doc="empty",
                says=(
                    "changed nothing",
                    "Cardiology: EKG report, recent labs",
                    "DocumentReference",
                ),
            ),
        ),
    ),
]
