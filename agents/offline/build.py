"""Building a workflow from a description or an SOP.

"create a workflow that gets referrals from http, checks coverage with fhir,
then emails the coordinator with gmail, every weekday at 7", numbered or
bulleted lists, and "first ... then ... finally ..." become one
``create_workflow`` call. "if ..., ... otherwise ..." becomes a branch: each
arm is the steps of one sentence or line; a stated condition becomes a JS edge
condition, "if it fails" an on-failure edge (see :mod:`.layout` for the edges).
"""

from __future__ import annotations

import re

from agents.offline.grammar import VERBS, imperative, unquote, words
from agents.offline.layout import create_call
from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.plausibility import check_build
from agents.offline.schedule import find_schedule
from agents.offline.sop import ARRIVAL, FILLER, MARKER, WEBHOOK, parse_sop
from agents.offline.sop import pieces_of as sop_pieces
from agents.offline.view import View

_CREATE = re.compile(
    r"^(?:create|build|make|set\s+up|design|draft|generate|start|write|automate)\s+(?:me\s+)?"
    r"(?:a|an|the|my|our)?\s*(?:new\s+)?(?:workflow|pipeline|flow|process|automation|sop)\b"
    r"(?P<rest>.*)$",
    re.I | re.S,
)
_SOP_HEADER = re.compile(
    r"^(?:here(?:'s| is)\s+(?:how|what|our|my|the)\b[^:\n]*|(?:our|my|the)\s+(?P<topic>(?:[\w-]+"
    r"\s+){0,3}?)(?:process|sop|procedure|steps|flow|workflow|routine|pipeline)\b[^:\n]*"
    r"|this\s+is\s+how\b[^:\n]*|the\s+steps\s+are)\s*:\s*",
    re.I,
)
# A title line over a list: "Coverage check:" or "Referral intake" (no verb, no schedule).
# "Daily sync (every day at 6):" says the schedule in brackets after the title.
_TITLE = re.compile(r"^(?P<title>[A-Za-z][\w '&/-]{1,60}?)\s*(?:\((?P<when>[^()]+)\))?\s*:?\s*$")
# "We check eligibility for every new referral: when a referral arrives, ...": an intro.
_INTRO = re.compile(r"^[^:\n.]{3,100}:\s+(?=(?:when|whenever|every|each|first|once|on|at)\b)", re.I)
_PERIOD_LEAD = re.compile(r"^(?:weekly|daily|monthly|nightly)\s+", re.I)
# "We ..." / "I ..." opening a description of what we do.
_WE_DO = re.compile(r"^(?:we|i)\s+(?:\w+\s+){0,2}?[a-z]+\b", re.I)
_NAME = re.compile(
    r"^\s*(?:called|named|titled)\s+(?P<name>\"[^\"]+\"|'[^']+'|[^,:\n]+?)"
    r"(?=\s+(?:that|which|to|where|with|for)\b|[,:\n]|$)"
    r"|^\s*for\s+(?P<topic>[^,:\n]+?)(?=\s+(?:that|which|where)\b|[,:\n])",
    re.I,
)
# "with three steps: ...": how many steps there are, said before them.
_STEPS_SAID = re.compile(
    r"^\s*(?:with|that\s+has|having|of|in)\s+(?:(?:exactly|just|only)\s+)?(?P<n>\d+|one|two"
    r"|three|four|five|six|seven|eight"
    r"|nine|ten)\s+(?:steps?|stages?|parts?|jobs?)\b\s*[:,-]?\s*",
    re.I,
)
_NUMBER_WORDS = {
    w: i for i, w in enumerate(words("one two three four five six seven eight nine ten"), start=1)
}
_LEAD_IN = re.compile(
    r"^[\s,:-]*(?:that|which|to|where|so\s+that|in\s+which|for\s+when)?\s*(?:it\s+|we\s+)?",
    re.I,
)


def strip_marker(line: str) -> str:
    return MARKER.sub("", line).strip()


def is_build_request(text: str) -> bool:
    return bool(_CREATE.match(text) or _SOP_HEADER.match(text))


def is_filler(text: str) -> bool:
    """ "That's it", "done", "etc": says nothing to do."""
    return bool(FILLER.match(text.strip(" .!")))


def starts_with_arrival(text: str) -> bool:
    """'when a lab result arrives, ...': a description of a whole workflow, never an edit."""
    return bool(ARRIVAL.match(text))


def looks_like_sop(text: str) -> bool:
    text = _INTRO.sub("", text, count=1)
    lines = [line for line in text.split("\n") if line.strip()]
    if sum(1 for line in lines if MARKER.match(line)) >= 2:
        return True
    if _SOP_HEADER.match(text):
        return True
    opening = re.match(r"^(?:first|firstly|first of all)\b", text, re.I) or ARRIVAL.match(text)
    first_sentence = re.split(r"(?<=[.!?])\s+|\n", text, maxsplit=1)[0]
    timed = find_schedule(first_sentence)
    lead = _PERIOD_LEAD.match(first_sentence)
    if timed is not None and timed.start <= (lead.end() if lead else 0):
        # "every day at 10pm back up the referrals table": the schedule, then what to do.
        return bool(first_sentence[timed.end :].strip(" ,:.")) or len(pieces_of(text)) >= 2
    trigger_first = WEBHOOK.match(first_sentence.strip(" .")) is not None
    described = _WE_DO.match(text) is not None and (trigger_first or timed is not None)
    return (bool(opening) or trigger_first or described) and len(pieces_of(text)) >= 2


def _title(body: str) -> tuple[str | None, str]:
    """A title line over a list ("Coverage check:") and the body without it."""
    lines = body.split("\n")
    title = _TITLE.match(lines[0].strip()) if len(lines) > 1 else None
    if title is None or not MARKER.match(lines[1]) or MARKER.match(lines[0]):
        return None, body
    words = title.group("title").split()
    if len(words) > 6 or imperative(words[0]).lower() in VERBS:
        return None, body
    rest = lines[1:]
    when = title.group("when")
    if when:
        # Only a schedule, all of it: read as the list's "Schedule:" line.
        timed = find_schedule(when)
        if timed is None or (when[: timed.start] + when[timed.end :]).strip(" ,.;"):
            return None, body
        rest = [f"Schedule: {when.strip()}", *rest]
    return title.group("title").strip(), "\n".join(rest)


def parse_build(text: str, view: View) -> Outcome | None:
    """A create_workflow plan, a reply (e.g. the workflow is not empty), or None."""
    match = _CREATE.match(text)
    body = match.group("rest") if match else text
    name: str | None = None
    if match:
        named = _NAME.match(body)
        if named:
            name = unquote(named.group("name") or "") or None
            if named.group("topic"):
                topic = unquote(named.group("topic"))
                name = topic[:1].upper() + topic[1:]
            body = body[named.end() :]
        body = _LEAD_IN.sub("", body, count=1)
    else:
        header = _SOP_HEADER.match(body)
        if header:
            topic = (header.group("topic") or "").strip()
            name = topic[:1].upper() + topic[1:] if topic else None
            body = body[header.end() :]
        elif not looks_like_sop(text):
            return None
        else:
            body = _INTRO.sub("", body, count=1)
    said = _STEPS_SAID.match(body)
    steps_said = None
    if said:
        count = said.group("n").lower()
        steps_said = int(count) if count.isdigit() else _NUMBER_WORDS[count]
        body = body[said.end() :]
    title, body = _title(body)
    name = name or title
    if view.jobs:
        steps = ", ".join(f'"{j["name"]}"' for j in view.jobs)
        return Reply(
            f'This workflow already has {len(view.jobs)} steps ({steps}). Say "start over" '
            "to replace them, or ask me to add, insert or change steps. Nothing was changed."
        )
    sop = parse_sop(body)
    sop.name = name or sop.name
    sop.steps_said = steps_said
    if not sop.steps():
        return Reply(
            'What steps should the workflow have? Describe them in order, e.g. "create a '
            "workflow that gets referrals from http, checks coverage with fhir, then emails "
            'the coordinator with gmail, every weekday at 7". Nothing was changed.'
        )
    doubt = check_build(sop, body)
    if doubt is not None:
        return doubt
    calls = [create_call(sop, view)]
    by_credential: dict[str, list[str]] = {}
    for step in sop.steps():
        if step.credential:
            by_credential.setdefault(step.credential, []).append(step.key)
    calls += [
        call("attach_credential", credential=credential, job_keys=keys)
        for credential, keys in by_credential.items()
    ]
    return Plan(calls, "Building the workflow.")


def pieces_of(body: str) -> list[str]:
    return [p.text for p in sop_pieces(body)]
