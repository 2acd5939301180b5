"""What the offline grammar is made of: a rule, its examples, and the turn it runs in.

A rule is a name, the section of the docs it belongs to, the stage it runs at,
its patterns (or none: then the handler is the matcher and returns None when
the text is not for it), its handler, and examples. The offline README's grammar tables
and the capability answer are rendered from the examples, and the tests run
every example through the real offline model, so the three cannot drift.

Stages, in the order the planner tries them (see :mod:`.table`):

- ``message``: the whole message, before it is split into commands (greeting,
  undo, start over, building a workflow);
- ``question``: the whole message as a question (never changes anything);
- ``command``: each command of the message (sentences, ";", "and then").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from agents.offline.plan import Outcome, Plan, Reply
from agents.offline.questions import Handler as QuestionHandler
from agents.offline.questions import Match
from agents.offline.references import NeedsAnswer, Resolver
from agents.offline.view import Scratch, View

Stage = Literal["message", "question", "command"]
Parser = Callable[[str, View, Resolver], Outcome | None]
Compile = Callable[[str, Scratch, str | None, datetime | None], Outcome | None]


@dataclass(frozen=True)
class Example:
    """A request a rule understands and what it does.

    ``does`` is the offline README's answer column (markdown). The tests run ``text`` (and
    every phrasing in ``also``) on the sample workflow ``doc`` (referral, chain,
    empty, unnamed, single, disconnected: tests/agents/offline/documents.py), on the
    page of ``job_key`` if given, and check that the model makes exactly the tool
    calls ``tools`` (by name, in order), that the trigger ends with ``cron``, and
    that the answer contains every fragment of ``says``. ``menu``, if set, is the
    short form the capability answer lists ("rename A to B")."""

    text: str
    does: str
    tools: tuple[str, ...] = ()
    doc: str = "referral"
    also: tuple[str, ...] = ()
    cron: str | None = None
    says: tuple[str, ...] = ()
    menu: str = ""
    job_key: str | None = None

    @property
    def texts(self) -> tuple[str, ...]:
        return (self.text, *self.also)


@dataclass
class Turn:
    """What a handler may use: the scratch copy (plans are tried there), the step whose
    page the user is on, and ``compile`` to understand the rest of a message (given
    the same ``now``)."""

    scratch: Scratch
    current: str | None
    compile: Compile
    now: datetime | None
    """When the request was made (``RequestContext.now``): what a cron trigger's next runs
    count from; ``None``: not known, so they are not said."""
    said: str = ""
    """The message as written, before polite words were dropped: a leading "also" or
    "now" marks a correction, though it is only politeness elsewhere."""
    view: View = field(init=False)
    resolver: Resolver = field(init=False)

    def __post_init__(self) -> None:
        self.view = self.scratch.view
        self.resolver = Resolver(self.view, self.current)


Handler = Callable[[Turn, str, "re.Match[str] | None"], Outcome | None]

TRACE: ContextVar[list[str] | None] = ContextVar("offline_rule_trace", default=None)
"""When set to a list, every rule that answers appends its name (for tests)."""


@dataclass(frozen=True)
class Rule:
    """One entry of the grammar. ``tried``: the planner runs the rule's plan on the
    scratch copy (a rule that composes already-tried plans sets it False)."""

    name: str
    section: str
    stage: Stage
    handler: Handler
    patterns: tuple[re.Pattern[str], ...] = ()
    examples: tuple[Example, ...] = ()
    tried: bool = True

    def apply(self, turn: Turn, text: str) -> Outcome | None:
        match = None
        if self.patterns:
            match = next((m for p in self.patterns if (m := p.match(text))), None)
            if match is None:
                return None
        outcome = self.handler(turn, text, match)
        trace = TRACE.get()
        if outcome is not None and trace is not None:
            trace.append(self.name)
        return outcome


def parser(parse: Parser) -> Handler:
    """A handler from a command parser ``(text, view, resolver) -> Outcome | None``."""

    def handle(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
        return parse(text, turn.view, turn.resolver)

    return handle


def question(answer: QuestionHandler) -> Handler:
    """A handler from a question answer ``(match, view, resolver) -> Outcome | None``."""

    def handle(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
        assert match is not None
        return answer(Match(match), turn.view, turn.resolver)

    return handle


def patterns(*sources: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(source, re.I) for source in sources)


def attempt(outcome: Outcome, scratch: Scratch) -> Outcome:
    """Run a plan on the scratch copy; a call the tools reject becomes an explanation."""
    if not isinstance(outcome, Plan):
        return outcome
    if not outcome.calls:
        raise NeedsAnswer(Reply("Nothing needs to change for that; the workflow is as asked."))
    for planned in outcome.calls:
        result = scratch.run(planned.name, planned.input)
        if not result.ok:
            message = re.sub(r"^Error \([\w_]+\): ", "", result.text)
            lead = "Nothing to change:" if result.error_code == "no_change" else "I can't do that:"
            raise NeedsAnswer(Reply(f"{lead} {message}", meta={"tool": planned.name}))
    return outcome


def at_stage(rules: Sequence[Rule], stage: Stage) -> list[Rule]:
    return [rule for rule in rules if rule.stage == stage]
