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

from agents.models.offline.adaptor_words import find_adaptor
from agents.models.offline.conditions import Condition, parse_condition, require_clear
from agents.models.offline.grammar import PRONOUN_OBJECTS, split_actions, step_name, unquote
from agents.models.offline.layout import Branch, Sop, Step, create_call
from agents.models.offline.plan import Outcome, Plan, Reply
from agents.models.offline.schedule import find_schedule
from agents.models.offline.view import View

_CREATE = re.compile(
    r"^(?:create|build|make|set\s+up|design|draft|generate|start|write|automate)\s+(?:me\s+)?"
    r"(?:a|an|the|my|our)?\s*(?:new\s+)?(?:workflow|pipeline|flow|process|automation|sop)\b"
    r"(?P<rest>.*)$",
    re.I | re.S,
)
_SOP_HEADER = re.compile(
    r"^(?:here(?:'s| is)\s+(?:how|what|our|my|the)\b[^:\n]*|(?:our|my|the)\s+(?:process|sop|"
    r"procedure|steps)\b[^:\n]*|this\s+is\s+how\b[^:\n]*|the\s+steps\s+are)\s*:\s*",
    re.I,
)
_NAME = re.compile(
    r"^\s*(?:called|named|titled)\s+(?P<name>\"[^\"]+\"|'[^']+'|[^,:\n]+?)"
    r"(?=\s+(?:that|which|to|where|with|for)\b|[,:\n]|$)"
    r"|^\s*for\s+(?P<topic>[^,:\n]+?)(?=\s+(?:that|which|where)\b|[,:\n])",
    re.I,
)
_LEAD_IN = re.compile(
    r"^[\s,:-]*(?:that|which|to|where|so\s+that|in\s+which|for\s+when)?\s*(?:it\s+|we\s+)?",
    re.I,
)
_MARKER = re.compile(r"^\s*(?:\d+\s*[.)]|[-*•]|step\s+\d+\s*[:.)-]|\(\d+\)|[a-h][.)])\s+", re.I)
_CONNECTOR = re.compile(
    r",\s*(?:and\s+)?(?:then|finally|next|lastly|after\s+that|afterwards)?[\s,]*"
    r"|\s+(?:and\s+)?then\s+|\s+and\s+finally\s+|\s+(?:and\s+)?after\s+that,?\s+|;\s*",
    re.I,
)
_LEADING_WORDS = re.compile(
    r"^(?:(?:and|then|first|firstly|first\s+of\s+all|next|finally|lastly|after\s+that|"
    r"afterwards|also|so)\b[\s,]*)+",
    re.I,
)
_ELSE = re.compile(
    r"^(?:otherwise|else|if\s+not|if\s+it\s+(?:isn'?t|is\s+not|doesn'?t|does\s+not|wasn'?t)\b[^,]*"
    r"|for\s+(?:everything|everyone|anything|all|any)\s+(?:else|others?)|in\s+(?:all\s+)?other"
    r"\s+cases|for\s+(?:the\s+)?(?:rest|others))\b[\s,:]*(?P<action>.*)$",
    re.I,
)
_IF = re.compile(r"^(?P<word>if|when|whenever|in\s+case|unless|only\s+if)\s+(?P<cond>.+)$", re.I)
_ON_FAILURE = re.compile(
    r"^(?:on|upon|in\s+case\s+of)\s+(?:failure|error|errors)\b[\s,:]*(?P<action>.*)$", re.I
)
_WEBHOOK = re.compile(
    r"^(?:(?:when|whenever|once|each\s+time|every\s+time)\s+(?:(?:we|i)\s+(?:receive|get)\b.*"
    r"|.*\b(?:arrives?|comes?\s+in|is\s+received|are\s+received|is\s+submitted|are\s+submitted"
    r"|is\s+created|gets?\s+created|is\s+posted|lands?|is\s+sent\s+to\s+us)\b.*)"
    r"|.*\b(?:triggered\s+by|on|via|from|with|using|by)\s+(?:an?\s+)?webhook\b.*"
    r"|(?:it\s+)?(?:runs?\s+)?(?:on\s+)?(?:a\s+)?webhook(?:\s+trigger)?)$",
    re.I,
)
_RUN_IT = re.compile(
    r"^(?:and\s+)?(?:(?:it|this|the\s+workflow|we)\s+)?(?:should\s+)?(?:run|runs|running|do|"
    r"does|repeat|happen|happens|trigger|schedule(?:d)?)?\s*(?:it|this|that|everything|all\s+this"
    r"|the\s+workflow)?\s*(?:on\s+a\s+schedule)?$",
    re.I,
)
_ARRIVAL = re.compile(
    r"^(?:when|whenever|once|each\s+time|every\s+time)\s+(?:an?\s+|the\s+|each\s+)?(?:new\s+)?"
    r"(?P<noun>[\w-]+(?:\s+[\w-]+)?)\s+(?:arrives?|comes?\s+in|is\s+received|is\s+submitted"
    r"|is\s+created|gets?\s+created|is\s+posted|lands?)\b",
    re.I,
)
_PRONOUN = re.compile(r"^(?P<verb>[A-Za-z-]+)\s+(?:it|them|this|that|these|those)\b", re.I)
_PARTICLES = frozenset({"up", "out", "down", "off", "back", "over"})
_PREPOSITIONS = frozenset(
    {"from", "to", "in", "into", "with", "by", "via", "on", "for", "at", "through", "using"}
)
_FILLER = re.compile(r"^(?:that'?s\s+(?:it|all)|done|etc|and\s+so\s+on|the\s+end)?$", re.I)


def strip_marker(line: str) -> str:
    return _MARKER.sub("", line).strip()


def is_build_request(text: str) -> bool:
    return bool(_CREATE.match(text) or _SOP_HEADER.match(text))


def is_filler(text: str) -> bool:
    """ "That's it", "done", "etc": says nothing to do."""
    return bool(_FILLER.match(text.strip(" .!")))


def starts_with_arrival(text: str) -> bool:
    """'when a lab result arrives, ...': a description of a whole workflow, never an edit."""
    return bool(_ARRIVAL.match(text))


def looks_like_sop(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    if sum(1 for line in lines if _MARKER.match(line)) >= 2:
        return True
    if _SOP_HEADER.match(text):
        return True
    opening = re.match(r"^(?:first|firstly|first of all)\b", text, re.I) or _ARRIVAL.match(text)
    return bool(opening) and len(pieces_of(text)) >= 2


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
            body = body[header.end() :]
        elif not looks_like_sop(text):
            return None
    if view.jobs:
        steps = ", ".join(f'"{j["name"]}"' for j in view.jobs)
        return Reply(
            f'This workflow already has {len(view.jobs)} steps ({steps}). Say "start over" '
            "to replace them, or ask me to add, insert or change steps. Nothing was changed."
        )
    sop = parse_sop(body)
    sop.name = name or sop.name
    if not any(isinstance(i, Step) or (isinstance(i, Branch) and i.then) for i in sop.items):
        return Reply(
            'What steps should the workflow have? Describe them in order, e.g. "create a '
            "workflow that gets referrals from http, checks coverage with fhir, then emails "
            'the coordinator with gmail, every weekday at 7". Nothing was changed.'
        )
    return Plan([create_call(sop, view)], "Building the workflow.")


def pieces_of(body: str) -> list[str]:
    pieces: list[str] = []
    for line in body.split("\n"):
        line = _MARKER.sub("", line).strip()
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            for piece in _CONNECTOR.split(sentence):
                piece = _LEADING_WORDS.sub("", piece.strip(" .!?")).strip(" ,.")
                if piece and not _FILLER.match(piece):
                    pieces.append(piece)
    return pieces


def parse_sop(body: str) -> Sop:
    sop = Sop()
    pending: Condition | None = None
    pending_else = False
    last_name = ""
    last_object = ""
    for piece in pieces_of(body):
        schedule = find_schedule(piece)
        if schedule is not None:
            rest = (piece[: schedule.start] + " " + piece[schedule.end :]).strip(" ,")
            sop.trigger = {"type": "cron", "cron_expression": schedule.cron}
            if _RUN_IT.match(rest):
                continue
            piece = _LEADING_WORDS.sub("", rest).strip()
        if _WEBHOOK.match(piece):
            sop.trigger = {"type": "webhook"}
            arrival = _ARRIVAL.match(piece)
            last_object = arrival.group("noun") if arrival else last_object
            continue
        action = piece
        otherwise = _ELSE.match(piece)
        failure = _ON_FAILURE.match(piece)
        conditional = _IF.match(piece)
        if otherwise:
            pending_else, pending = True, None
            action = otherwise.group("action")
        elif failure:
            pending, pending_else = Condition("on_job_failure"), False
            action = failure.group("action")
        elif conditional:
            condition, action = _split_condition(conditional.group("cond"), _hint(last_name))
            if condition is None:
                condition, action = None, piece
            elif conditional.group("word").lower() == "unless":
                condition = condition.negated()
            if condition is not None:
                pending, pending_else = condition, False
        if not action.strip():
            continue
        if last_object:
            action = _PRONOUN.sub(rf"\g<verb> {last_object}", action, count=1)
        steps = _steps(action)
        if not steps:
            continue
        last = sop.items[-1] if sop.items else None
        if pending is not None and pending.type != "always":
            sop.items.append(Branch(pending, steps))
        elif pending_else and isinstance(last, Branch) and not last.otherwise:
            last.otherwise.extend(steps)
        else:
            sop.items.extend(steps)
        if pending is None or pending.type != "on_job_failure":
            last_object = _object_of(steps[-1].name) or last_object
        pending, pending_else = None, False
        last_name = steps[-1].name
    return sop


def _object_of(name: str) -> str:
    """'Fetch submissions from kobo' -> 'submissions' (what a later 'them' refers to)."""
    words = name.split()[1:]
    while words and words[0].lower() in _PARTICLES:
        words = words[1:]
    kept: list[str] = []
    for word in words:
        if word.lower() in _PREPOSITIONS or word.lower() in PRONOUN_OBJECTS:
            break
        kept.append(word)
    return " ".join(kept[:3])


def _split_condition(text: str, hint: str | None) -> tuple[Condition | None, str]:
    """'it fails alert the team' -> (on failure, 'alert the team'); 'the plan is X' -> (js, '')."""
    whole = require_clear(parse_condition(text, hint))
    if whole is not None:
        return whole, ""
    words = text.split()
    for i in range(1, len(words)):
        head = " ".join(words[:i])
        condition = parse_condition(head, hint)
        if condition is not None and condition.type in ("on_job_failure", "on_job_success"):
            return condition, " ".join(words[i:])
    return None, text


def _hint(previous_name: str) -> str | None:
    words = [w for w in previous_name.split()[1:] if len(w) > 2]
    return words[-1].lower() if words else None


def _steps(clause: str) -> list[Step]:
    """One step per verb phrase: 'pull the referral and check the insurance' is two."""
    steps: list[Step] = []
    for part in split_actions(clause):
        adaptor, rest = find_adaptor(part)
        name = step_name(rest)
        if name and re.search(r"[A-Za-z]", name):
            steps.append(Step(name, adaptor or "common"))
    return steps
