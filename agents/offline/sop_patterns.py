"""The words and patterns the SOP reader (:mod:`.sop`) recognises."""

from __future__ import annotations

import re

from agents.offline.grammar import words

MARKER = re.compile(r"^\s*(?:\d+\s*[.)]|[-*•]|step\s+\d+\s*[:.)-]|\(\d+\)|[a-h][.)])\s+", re.I)
CONNECTOR = re.compile(
    r",\s*(?:and\s+)?(?:then|finally|next|lastly|after\s+that|afterwards)?[\s,]*"
    r"|\s+(?:and\s+)?then\s+|\s+and\s+finally\s+|\s+(?:and\s+)?after\s+that,?\s+|;\s*"
    r"|\s+and\s+(?=(?:if|when|unless|otherwise)\b)",
    re.I,
)
LEADING_WORDS = re.compile(
    r"^(?:(?:and|then|first|firstly|first\s+of\s+all|next|finally|lastly|after\s+that|"
    r"afterwards|also|so)\b[\s,]*)+",
    re.I,
)
FILLER = re.compile(r"^(?:that'?s\s+(?:it|all)|done|etc|and\s+so\s+on|the\s+end)?$", re.I)
ELSE = re.compile(
    r"^(?:otherwise|else|if\s+not|if\s+it\s+(?:isn'?t|is\s+not|doesn'?t|does\s+not|wasn'?t)\b[^,]*"
    r"|for\s+(?:everything|everyone|anything|all|any)\s+(?:else|others?)|in\s+(?:all\s+)?other"
    r"\s+cases|for\s+(?:the\s+)?(?:rest|others))\b[\s,:]*(?P<action>.*)$",
    re.I,
)
IF = re.compile(r"^(?P<word>if|when|whenever|in\s+case|unless|only\s+if)\s+(?P<cond>.+)$", re.I)
ON_FAILURE = re.compile(
    r"^(?:on|upon|in\s+case\s+of)\s+(?:failure|error|errors)\b[\s,:]*(?P<action>.*)$", re.I
)
# Something happening in another system: "is uploaded", "registers", "is closed".
EVENT = (
    r"(?:is|are|gets?)\s+(?:uploaded|updated|added|registered|closed|completed|booked|scheduled"
    r"|opened|enrolled|approved|rejected|cancelled|canceled|signed)|registers|signs\s+up|enrolls"
)
# A record arriving: "arrives", "comes in", "is submitted", and the events above.
ARRIVES = (
    r"arrives?|comes?\s+in|is\s+received|is\s+submitted|is\s+created|gets?\s+created"
    rf"|is\s+posted|lands?|{EVENT}"
)
WEBHOOK = re.compile(
    r"^(?:(?:when|whenever|once|each\s+time|every\s+time)\s+(?:(?:we|i)\s+(?:receive|get)\b.*"
    rf"|.*\b(?:{ARRIVES}|are\s+received|are\s+submitted|is\s+sent\s+to\s+us)\b.*)"
    r"|.*\b(?:triggered\s+by|on|via|from|with|using|by)\s+(?:an?\s+)?webhook\b.*"
    r"|(?:it\s+)?(?:runs?\s+)?(?:on\s+)?(?:a\s+)?webhook(?:\s+trigger)?)$",
    re.I,
)
RUN_IT = re.compile(
    r"^(?:and\s+)?(?:(?:it|this|the\s+workflow|we)\s+)?(?:should\s+)?(?:run|runs|running|do|"
    r"does|repeat|happen|happens|trigger|schedule(?:d)?)?\s*(?:it|this|that|everything|all\s+this"
    r"|the\s+workflow)?\s*(?:on\s+a\s+schedule)?$",
    re.I,
)
ARRIVAL = re.compile(
    r"^(?:when|whenever|once|each\s+time|every\s+time)\s+(?:an?\s+|the\s+|each\s+)?(?:new\s+)?"
    rf"(?P<noun>[\w-]+(?:\s+[\w-]+)?)\s+(?:{ARRIVES})\b",
    re.I,
)
# Where the thing arrived: "in CommCare", "from ODK Central".
ARRIVAL_PLACE = re.compile(r"^\s+(?:in|on|from|into|to|at|via)\s+(?:the\s+)?[\w-]+", re.I)
# "Trigger: webhook", "Schedule: every day at 6" (a heading line of a list).
HEADED_TRIGGER = re.compile(
    r"^(?:trigger|schedule|runs?|when|start|starts)\s*:\s*(?P<value>.+)$", re.I
)
# A reason: said to explain a step, never a step itself.
REASON = re.compile(r"^(?:because|since|as\s+(?=\w+\s+\w+)|so\s+that|in\s+order\s+to)\b", re.I)
# "X before I can Y": Y comes after X.
BEFORE_CAN = re.compile(
    r"^(?P<first>.+?)\s+before\s+(?:i|we|you|they|the\s+\w+)\s+(?:can|could|may|do|get\s+to)\s+"
    r"(?P<later>.+)$",
    re.I,
)
# "move to documents", "move on to scheduling": continue with a step named elsewhere.
HAND_OVER = re.compile(
    r"^(?:(?:i|we)\s+)?(?:just\s+)?(?:move|carry|(?P<go>go))\s+(?:on\s+)?(?:to|with)\s+"
    r"(?:the\s+)?(?P<target>.+)$"
    r"|^(?:continue|proceed)\s+(?:on\s+)?(?:to|with)\s+(?:the\s+)?(?P<target2>.+)$",
    re.I,
)
# "Weekly on Mondays at 9:" leaves "Weekly" once the days and time are read.
PERIOD_WORD = re.compile(r"^(?:weekly|daily|monthly|nightly|once\s+a\s+week)\b[\s,:]*", re.I)
TRAILING_FIRST = re.compile(r"\s+(?:first|right\s+away|straight\s+away|immediately)$", re.I)
PRONOUN = re.compile(
    # "its"/"their" too (the thing's own: "fetch its documents" -> "fetch referral documents");
    # the word must end there: "fetch its" is not "fetch it" + "s".
    r"^(?P<verb>[A-Za-z-]+)\s+(?:its|their|it|them|this|these|those|her|him|that(?!\s+(?:the|a|an"
    r"|all|each|every|there|it|we|they|\w+\s+(?:is|are|was|were|has|have))\b))\b"
    r"(?:\s+(?P<particle>up|out"
    r"|down|off|back|over)\b)?",
    re.I,
)
NOTHING = re.compile(
    r"^(?:(?:we|i)\s+)?(?:just\s+)?(?:do\s+nothing|nothing(?:\s+else)?|stop|skip\s+(?:it|them)"
    r"|end\s+(?:there|the\s+run)|leave\s+(?:it|them))$",
    re.I,
)
# Checking something does not change what "it" refers to.
INSPECTING = frozenset(
    words(
        "check checks verify verifies validate validates confirm confirms review reviews see "
        "determine make ensure test inspect"
    )
)
PARTICLES = frozenset({"up", "out", "down", "off", "back", "over"})
WHETHER = re.compile(r"\b(?:whether|if)\s+(?:the\s+|a\s+|an\s+)?(?P<subject>[\w-]+)", re.I)
THING = "THINGREF"
SYNONYMS = {"docs": "documents", "doc": "document", "info": "information", "labs": "lab"}
