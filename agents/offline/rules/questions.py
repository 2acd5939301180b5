"""Questions, tried on the whole message after building: they never change anything.

Each rule is one pattern (with numbered alternatives: ``ref2`` reads as ``ref``) and
the answer in :mod:`agents.offline.questions`. The first pattern whose
answer is not None wins; a question about a step that does not exist falls
through to the next one ("what is X" after "what is this workflow").
"""

from __future__ import annotations

import re

from agents.offline import preview
from agents.offline import questions as q
from agents.offline.plan import Outcome, Reply
from agents.offline.rules.base import Example, Rule, Turn, parser, patterns, question

_THE = r"(?:the\s+)?"
_WF = r"(?:this|the|my|our)\s+(?:workflow|flow|pipeline|process)|it|this"
_REF = r"(?P<ref>.+?)"


def _rule(name: str, source: str, answer: q.Handler, *examples: Example) -> Rule:
    return Rule(name, "questions", "question", question(answer), patterns(source), examples)


def _describe(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome:
    """The chart of the workflow; a cron trigger's next runs count from the turn's time."""
    return Reply(q.chart(turn.view, turn.now))


RULES = [
    Rule(
        "impact",
        "questions",
        "question",
        parser(preview.preview),
        (),
        (
            Example(
                "what happens if I remove check coverage",
                "`preview_change` (`remove_jobs` on a copy): the steps that would be removed and "
                "those that would no longer run, by name; nothing changes, read-only too",
                ("preview_change",),
                also=(
                    "what if I delete check coverage",
                    "what would break if check coverage were removed",
                    "what does removing get referrals do",
                    "is it safe to remove check coverage",
                ),
                says=("Check coverage",),
                menu="what happens if I remove A",
            ),
            Example(
                "what happens if I disconnect check coverage from send email",
                '`preview_change` (`remove_edges`, or `update_edges` for "... is disabled")',
                ("preview_change",),
                also=(
                    "what if the connection between get referrals and check coverage is disabled",
                ),
            ),
        ),
    ),
    _rule(
        "adaptors",
        r"^(?:what|which)\s+(?:adaptors|connectors)\b.*$",
        q._adaptors,
        Example("what adaptors are available", "the adaptors in the catalogue"),
    ),
    _rule(
        "functions",
        r"^(?:what|which)\s+functions\s+(?:does|do|are\s+in|can\s+i\s+use\s+(?:in|with))\s+"
        r"(?:the\s+)?(?P<adaptor>[\w@./-]+)(?:\s+adaptor)?(?:\s+(?:have|offer|provide))?$",
        q._functions,
        Example("what functions does http have", "an adaptor's functions, from the catalogue"),
    ),
    _rule(
        "show_code",
        rf"^(?:show|print|display|give)\s+(?:me\s+)?{_THE}(?:code|body|script)\s+(?:of|for|in)\s+"
        rf"{_REF}$|^what(?:'s|\s+is)\s+(?:the\s+)?code\s+(?:of|for|in)\s+(?P<ref2>.+?)$",
        q._show_code,
        Example(
            "show me the code of get referrals",
            "`inspect_job_code`",
            tools=("inspect_job_code",),
            also=("what is the code for get referrals",),
        ),
    ),
    _rule(
        "if_fails",
        rf"^what\s+(?:happens|runs|comes|is\s+next|happens\s+next|runs\s+next|comes\s+next)\s+"
        rf"(?:if|when|once)\s+{_REF}\s+(?P<outcome>fails|errors|breaks|crashes|succeeds|works"
        r"|passes)$|^what\s+if\s+(?P<ref2>.+?)\s+(?P<outcome2>fails|succeeds)$"
        r"|^(?:if|when|once|suppose|say)\s+(?P<ref3>.+?)\s+(?P<outcome3>fails|errors|breaks"
        r"|crashes|succeeds|works|passes),?\s+(?:then\s+)?what\s+(?:happens|runs|comes\s+next"
        r"|happens\s+next|runs\s+next|is\s+next)(?:\s+then|\s+next)?$",
        q._outcome,
        Example(
            "what happens if check coverage fails",
            "the steps its on-failure (or on-success) edges lead to",
            also=(
                "what happens when check coverage succeeds",
                "if check coverage fails, what happens",
                "when check coverage works what runs next",
            ),
            says=("Send",),
            menu="what happens if A fails",
        ),
    ),
    _rule(
        "after",
        rf"^(?:what|where)\s+(?:happens|runs|comes|goes|is\s+next|does\s+it\s+go)\s+(?:next\s+)?"
        rf"after\s+{_REF}$|^what\s+(?:follows|comes\s+after)\s+{_REF.replace('ref', 'ref2')}$"
        rf"|^where\s+does\s+(?P<ref3>.+?)\s+(?:go|lead)(?:\s+next)?$"
        r"|^(?:which|what)\s+(?:steps?|jobs?)\s+(?:run|runs|come|comes|follow|follows|happen"
        r"|happens|go|goes)\s+(?:next\s+)?after\s+(?P<ref4>.+?)$",
        q._after,
        Example(
            "what happens after check coverage",
            "the steps it leads to, and on what",
            also=("where does get referrals go", "which steps run after check coverage"),
        ),
    ),
    _rule(
        "before",
        rf"^what\s+(?:happens|runs|comes|leads)\s+(?:before|to|into)\s+{_REF}$"
        rf"|^what\s+(?:feeds|precedes)\s+(?P<ref2>.+)$"
        r"|^(?:which|what)\s+(?:steps?|jobs?)\s+(?:run|runs|come|comes|happen|happens|lead|leads"
        r"|feed|feeds)\s+(?:before|to|into)\s+(?P<ref3>.+?)$",
        q._before,
        Example(
            "what runs before check coverage",
            "the steps (or trigger) that lead to it",
            says=("Get referrals",),
        ),
    ),
    _rule(
        "uses",
        r"^(?:which|what)\s+(?:steps?|jobs?)\s+(?:use|uses|are\s+using|run\s+on|talk\s+to)\s+"
        r"(?:the\s+)?(?P<adaptor>[\w@./-]+)(?:\s+adaptor)?$"
        r"|^(?:what|which|does\s+anything|do\s+any\s+steps)\s+uses?\s+(?:the\s+)?"
        r"(?P<adaptor2>[\w@./-]+)(?:\s+adaptor)?$"
        r"|^how\s+many\s+(?P<count>steps?|jobs?)\s+(?:use|uses|are\s+using|run\s+on|talk\s+to"
        r"|call)\s+(?:the\s+)?(?P<adaptor3>[\w@./-]+)(?:\s+adaptor)?$",
        q._uses,
        Example(
            "which steps use http",
            "the steps with that adaptor",
            says=("Get referrals",),
            menu="which steps use http",
        ),
        Example(
            "how many steps use fhir",
            "how many steps have that adaptor, counted from the document, and which",
            also=("how many jobs are using the gmail adaptor",),
            says=("1 step of 4 uses",),
        ),
    ),
    _rule(
        "code_status",
        r"^(?:which|what)\s+(?:steps?|jobs?)\s+(?:(?P<no>have\s+no|don'?t\s+have|do\s+not\s+have|"
        r"lack|are\s+missing|still\s+need|need)|have|already\s+have)\s+(?:any\s+)?code$"
        r"|^how\s+many\s+(?P<count>steps?|jobs?)\s+(?:(?P<no2>have\s+no|don'?t\s+have"
        r"|do\s+not\s+have|lack|are\s+missing|still\s+need|need)|have|already\s+have)"
        r"\s+(?:any\s+)?code(?:\s+yet)?$",
        q._code_status,
        Example(
            "which steps have no code",
            "the steps with (or without) code",
            also=("which steps have code",),
        ),
        Example(
            "how many steps have no code",
            "how many steps have (or lack) code, counted from the document, and which",
            also=("how many steps already have code",),
            says=("of 4",),
        ),
    ),
    _rule(
        "code_size",
        rf"^how\s+(?:much|many\s+lines\s+of)\s+code\s+(?:does|do|is\s+(?:there\s+)?in|are\s+"
        rf"(?:there\s+)?in)\s+{_REF}(?:\s+(?:have|hold|contain|got))?$"
        rf"|^how\s+many\s+lines\s+(?:does|do|are\s+(?:there\s+)?in|in)\s+(?P<ref2>.+?)"
        rf"(?:\s+(?:have|hold|contain))?$"
        rf"|^how\s+(?:long|big|large)\s+is\s+(?:the\s+)?(?:code|body)\s+(?:of|for|in)\s+"
        rf"(?P<ref3>.+)$|^what(?:'s|\s+is)\s+(?:the\s+)?(?:code\s+size|size\s+of\s+the\s+code|"
        rf"line\s+count)\s+(?:of|for|in)\s+(?P<ref4>.+)$",
        q._code_size,
        Example(
            "how much code does get referrals have",
            "the lines of its body that hold code, counted from the document",
            also=(
                "how many lines of code are in get referrals",
                "how long is the code of get referrals",
            ),
            says=("1 line of code",),
        ),
    ),
    _rule(
        "what_triggers",
        rf"^(?:what|who)\s+(?:triggers|starts|kicks\s+off|runs)\s+(?:{_WF})$"
        rf"|^how\s+(?:is|does)\s+(?:{_WF})\s+(?:triggered|start|get\s+triggered|run)$"
        rf"|^when\s+(?:does|will)\s+(?:{_WF})\s+run$|^what(?:'s|\s+is)\s+{_THE}(?:schedule|trigger)$"
        rf"|^is\s+{_THE}(?:trigger|schedule|webhook)\s+(?:enabled|on|active|disabled|off)$",
        q._trigger,
        Example(
            "what triggers this",
            "the trigger, its schedule and whether it is enabled",
            also=("when does it run", "is the trigger enabled"),
            menu="what triggers this",
        ),
    ),
    _rule(
        "count_edges",
        rf"^(?:how\s+many|list|show|what\s+are|which\s+are)\s+(?:me\s+)?{_THE}(?:all\s+)?"
        rf"(?:the\s+)?(?:edges|connections|links)(?:\s+(?:are\s+there|(?:are\s+)?in\s+"
        rf"(?:{_WF})|(?:does|do)\s+(?:{_WF})\s+have))?$",
        q._count_edges,
        Example(
            "how many connections are there",
            "every connection from one step (or the trigger) to the next, counted",
            also=("list the edges",),
            says=("4 connections", 'from "Check coverage" to "Send SMS" (on failure)'),
        ),
    ),
    _rule(
        "list_steps",
        rf"^(?:list|show|name|what\s+are|which\s+are|give\s+me)\s+(?:me\s+)?{_THE}(?:all\s+)?"
        rf"(?:the\s+)?steps(?:\s+in\s+(?:{_WF}))?$"
        rf"|^how\s+many\s+(?:steps|jobs)(?:\s+(?:are\s+there|(?:are\s+)?in\s+(?:{_WF})"
        rf"|(?:does|do)\s+(?:{_WF}|we|you)\s+have|(?:{_WF})\s+has))?$"
        rf"|^what\s+steps\s+(?:are\s+there|(?:are\s+)?in\s+(?:{_WF})|(?:does|do)\s+(?:{_WF}"
        rf"|we)\s+have|(?:{_WF})\s+has)$",
        q._list_steps,
        Example(
            "list the steps",
            "the steps, with their adaptors",
            also=("how many steps are there", "what steps does this workflow have"),
            says=("Check coverage",),
            menu="list the steps",
        ),
    ),
    Rule(
        "describe",
        "questions",
        "question",
        _describe,
        patterns(
            rf"^(?:what\s+does\s+(?:{_WF})\s+do|describe\s+(?:{_WF})|explain\s+(?:{_WF})"
            rf"|summari[sz]e\s+(?:{_WF})|give\s+me\s+an\s+overview.*|walk\s+me\s+through.*"
            rf"|what\s+is\s+(?:{_WF})|show\s+(?:me\s+)?(?:{_WF})|overview)$"
        ),
        (
            Example(
                "what does this workflow do",
                "the trigger and every step, in order, with the edges between them",
                also=("describe this workflow",),
                menu="what does this workflow do",
            ),
        ),
    ),
    _rule(
        "about",
        rf"^(?:what\s+does\s+{_REF}\s+do|tell\s+me\s+about\s+(?P<ref2>.+)|what\s+is\s+(?P<ref3>.+)"
        rf"|describe\s+(?P<ref4>.+)|explain\s+(?P<ref5>.+))$",
        q._about,
        Example(
            "tell me about send email",
            "one step: its adaptor, code, and edges in and out",
            also=("what is check coverage",),
        ),
    ),
    _rule(
        "docs",
        r"^(?:search\s+(?:the\s+)?(?:docs|documentation)\s+for|look\s+up|how\s+do\s+i|how\s+can\s+i"
        r"|how\s+to)\s+(?P<query>.+)$",
        q._docs,
        Example(
            "how do I send an sms with twilio",
            "`search_documentation`",
            tools=("search_documentation",),
        ),
    ),
]
