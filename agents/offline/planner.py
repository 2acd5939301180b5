"""One planner request -> an outcome: tool calls to propose, or a plain reply.

Clarification follow-ups first, then the rule table (:mod:`.rules.table`), in
order: rules on the whole message (greeting, undo, "start over", building),
questions, then commands (several may be given, separated by sentences, ";",
"and then"). Every planned call is first run on a scratch copy of the workflow
with the real tools: a plan the tools would reject becomes an explanation, never
a half-applied edit. Read-only sessions get answers only.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from agents.models.base import RequestContext
from agents.offline import build
from agents.offline.grammar import clean, strip_polite
from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.questions import question_body
from agents.offline.references import Found, NeedsAnswer, Resolver
from agents.offline.rules import RULES, Turn, attempt, capabilities
from agents.offline.rules.base import at_stage
from agents.offline.runs import FIX
from agents.offline.view import Scratch, View
from tools.registry import MUTATING_TOOLS, spec_for

CAPABILITIES = capabilities()

_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z])|;\s*|\n+|,?\s+and\s+then\s+|,\s+then\s+", re.I)
_QUALIFIER = re.compile(r"^(?:but|if|when|unless|so|only)\b", re.I)
_ASKED = re.compile(r'^Which step do you mean by "(?P<phrase>[^"]+)": (?P<options>.+)\? Nothing')
_MESSAGE_RULES = at_stage(RULES, "message")
_QUESTION_RULES = at_stage(RULES, "question")
_COMMAND_RULES = at_stage(RULES, "command")


def plan(context: RequestContext) -> Outcome:
    text = clean(context.user_text or "")
    view = View(context.structure)
    current = context.job_key if context.page == "job" else None
    # Errors mode: the editor's validation errors and the session's last failed test run
    # (its step, error and input) are what "fix it" (or an empty message) is about.
    problems = "\n".join(p for p in (context.errors, context.last_run) if p)
    if problems and (not text or FIX.match(strip_polite(text))):
        outcome: Outcome = _fix_errors(problems, view)
    else:
        text = _follow_up(text, context.history, view) or text
        scratch = Scratch(context.structure)
        try:
            outcome = _compile(text, scratch, current, context.now) or _not_a_request(text)
        except NeedsAnswer as needs:
            outcome = needs.reply
    # Plan mode is an offer to change things too: not in a read-only session.
    mutating = isinstance(outcome, Plan) and any(
        c.name in MUTATING_TOOLS or getattr(spec_for(c.name), "offers", None) for c in outcome.calls
    )
    if mutating and context.read_only:
        return Reply(
            "This session is read-only, so I can't change the workflow. I can answer "
            'questions about it instead, e.g. "what does this workflow do", "what happens '
            'if <step> fails", "what happens if I remove <step>" or "which steps use http".'
        )
    return outcome


def _compile(
    text: str, scratch: Scratch, current: str | None, now: datetime | None
) -> Outcome | None:
    stripped = strip_polite(text)
    turn = Turn(scratch, current, _compile, now, said=text)
    for rule in _MESSAGE_RULES:
        outcome = rule.apply(turn, stripped)
        if outcome is not None:
            return attempt(outcome, scratch) if rule.tried else outcome
    body = question_body(stripped)
    for rule in _QUESTION_RULES:
        outcome = rule.apply(turn, body)
        if outcome is not None:
            return attempt(outcome, scratch) if rule.tried else outcome
    parts = _SPLIT.split(stripped)
    pieces = (strip_polite(build.strip_marker(p)) for p in parts)
    commands = [c for c in pieces if c and not build.is_filler(c)]
    if len(commands) > 1:
        # No falling back to one reading of the whole text: it would swallow the part
        # that did not parse (e.g. into a new name).
        combined: Plan = Plan([])
        for command in commands:
            outcome_one = _command(command, scratch, current, now)
            if outcome_one is None:
                return not_understood(command)
            if isinstance(outcome_one, Reply):
                return outcome_one
            combined = combined + outcome_one
        return combined
    return _command(" ".join(commands[0].split()), scratch, current, now) if commands else None


def _command(
    text: str, scratch: Scratch, current: str | None, now: datetime | None
) -> Outcome | None:
    turn = Turn(scratch, current, _compile, now)
    for rule in _COMMAND_RULES:
        outcome = rule.apply(turn, text)
        if outcome is not None:
            rest = outcome.rest if isinstance(outcome, Plan) else ""
            outcome = attempt(outcome, scratch) if rule.tried else outcome
            return _and_rest(outcome, rest, scratch, current, now) if rest else outcome
    return None


def _and_rest(
    first: Outcome, rest: str, scratch: Scratch, current: str | None, now: datetime | None
) -> Outcome:
    """The text a command left over ("rename A to B and then ...") must be a command of its
    own; a qualifier ("but only ...", "if ...") or anything not understood changes nothing."""
    clause = rest.lstrip(" ,;.")
    if not isinstance(first, Plan) or build.is_filler(strip_polite(clause)):
        return first
    following = None
    if not _QUALIFIER.match(clause):
        following = _compile(strip_polite(clause), scratch, current, now)
    if following is None:
        raise NeedsAnswer(not_understood(clause, name_hint=True))
    if isinstance(following, Reply):
        return following
    return first + following


def _not_a_request(text: str) -> Reply:
    """Nothing in the message was understood: say so, then what is understood."""
    if not text.strip():
        return Reply(CAPABILITIES)
    return Reply("I didn't understand that as a request, so I changed nothing.\n\n" + CAPABILITIES)


def not_understood(part: str, *, name_hint: bool = False) -> Reply:
    quote = (
        " If it is part of a new name, put the whole name in quotes, e.g. "
        "'rename A to \"Checks and balances\"'."
        if name_hint
        else ""
    )
    return Reply(f'I didn\'t understand "{part}", so I changed nothing.{quote}\n\n' + CAPABILITIES)


def _follow_up(text: str, history: list[dict[str, Any]], view: View) -> str | None:
    """The earlier request with the step the user just picked, if they were answering
    "Which step do you mean by ...?"."""
    if len(history) < 2:
        return None
    asked = _text_of(history[-1]) if history[-1].get("role") == "assistant" else ""
    match = _ASKED.match(asked)
    original = _text_of(history[-2]) if history[-2].get("role") == "user" else ""
    if not match or not original:
        return None
    keys = [k for k in re.findall(r"\(([\w-]+)\)", match.group("options")) if k in view.by_key]
    if not keys:
        return None
    subset = View({**view.raw, "jobs": [view.by_key[k] for k in keys]})
    reply = re.sub(r"^(?:i\s+mean\s+|the\s+one\s+called\s+)", "", strip_polite(text), flags=re.I)
    ordinal = re.fullmatch(r"(?:the\s+)?(first|second|third|last)(?:\s+one)?", reply, re.I)
    chosen: str | None = None
    if ordinal:
        index = {"first": 0, "second": 1, "third": 2, "last": -1}[ordinal.group(1).lower()]
        chosen = keys[index] if abs(index) < len(keys) or index == -1 else None
    else:
        result = Resolver(subset).resolve(re.sub(r"\s+one$", "", reply))
        chosen = result.key if isinstance(result, Found) else None
    if chosen is None:
        return None
    phrase = re.escape(match.group("phrase"))
    pattern = rf"(?<![\w-])[\"']?{phrase}[\"']?(?![\w-])"
    replaced, count = re.subn(pattern, chosen, original, count=1, flags=re.I)
    return replaced if count else None


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content", message.get("text", ""))
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return str(content)


def _shorten(text: str, limit: int) -> str:
    """``text`` cut at a word boundary (a URL or a name is never cut inside)."""
    if len(text) <= limit:
        return text.rstrip(".")
    return text[:limit].rsplit(" ", 1)[0].rstrip(".,;:") + " …"


def _fix_errors(errors: str, view: View) -> Outcome:
    calls = []
    for trigger in view.triggers:
        if not view.out_edges(trigger["key"]) and view.first():
            edge = {"source": trigger["key"], "target": view.first(), "condition_type": "always"}
            calls.append(call("add_edges", edges=[edge]))
    if calls and re.search(r"not connected|no edge|unconnected", errors, re.I):
        return Plan(calls, "Connecting the trigger.")
    summary = _shorten(" ".join(errors.split()), 400)
    return Reply(
        f"I can't fix this automatically offline: {summary}. Tell me the change in one of the "
        'forms I understand (e.g. "rename A to B", "connect A to B"), or set ANTHROPIC_API_KEY '
        "for free-form requests."
    )
