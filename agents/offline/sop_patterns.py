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
    r"^(?:(?:we|i|it|the\s+workflow|the\s+run)\s+)?(?:just\s+)?(?:do(?:es)?\s+nothing"
    r"|nothing(?:\s+else)?|stop(?:s|ped)?(?:\s+(?:there|here|the\s+run))?|skip\s+(?:it|them)"
    r"|ends?\s+(?:there|here|the\s+run)|leaves?\s+(?:it|them))$",
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
# A condition or a loop said after a step's words ("text the doctor unless the doctor is on
# leave", "poll the lab api until the result is ready"): the step name would drop it.
CUT_CONDITION = re.compile(
    r"\s+(?P<clause>(?:unless|until|till|while|whenever|as\s+soon\s+as|once|otherwise|except)"
    r"\s+.+)$",
    re.I,
)
# "If anything fails, email the admin": a failure of no step in particular.
ANY_STEP = re.compile(
    r"^(?:anything|something|everything|any(?:thing)?\s+(?:else|step|steps|of\s+(?:them|these|those"
    r"|the\s+steps))|one\s+of\s+(?:them|these|those|the\s+steps)|either(?:\s+one)?|a\s+step"
    r"|any|all|the\s+(?:workflow|run|process|whole\s+thing))$",
    re.I,
)
# "and enable it", "turn it on": the new workflow's trigger starts enabled.
ENABLE = re.compile(
    r"^(?:and\s+)?(?:then\s+)?(?:(?:enable|activate|turn\s+on|switch\s+on)\s+(?:it|this|the"
    r"\s+(?:trigger|schedule|workflow|cron|webhook))|(?:turn|switch)\s+(?:it|this|the\s+(?:trigger"
    r"|schedule|workflow))\s+on)(?:\s+(?:right\s+away|now|immediately|too|as\s+well))?$",
    re.I,
)
ENABLE_TAIL = re.compile(
    r"[\s,]+and\s+(?:then\s+)?(?:(?:enable|activate|turn\s+on|switch\s+on)\s+it|(?:turn|switch)"
    r"\s+it\s+on)(?:\s+(?:right\s+away|now|immediately|too|as\s+well))?$",
    re.I,
)
# "using the dhis2-prod credential", "with credential payer-portal": a credential, never a step
# or a part of a step's name.
_CRED_WORD = r"(?!(?:the|a|an|our|my|its|their|this|that)\b)[\w@.:/-]+"
_CRED_NAME = rf"(?:\"[^\"]+\"|'[^']+'|{_CRED_WORD}(?:\s+{_CRED_WORD}){{0,2}}?)"
CREDENTIAL = re.compile(
    r"[\s,]*\(?\b(?:with|using|via|through|on)\s+(?:the\s+|a\s+|an\s+|our\s+|my\s+|its\s+)?"
    rf"(?:credentials?\s+(?:called\s+|named\s+)?(?P<after>{_CRED_NAME})"
    rf"|(?P<before>{_CRED_NAME})\s+credentials?|(?P<bare>credentials?))\)?(?=[\s,.;)]|$)",
    re.I,
)


def credential_name(match: re.Match[str]) -> str | None:
    """The credential's name a :data:`CREDENTIAL` match says (None: "with a credential")."""
    name = match.group("after") or match.group("before")
    return name.strip().strip("'\"") if name else None


# What is left of "every day at dawn" once the schedule is read: a time that was not read.
UNREAD_TIME = re.compile(r"^(?:at|around|about|by|@)\s+\S", re.I)
# Words that start a clause of their own: what a step works on ends before them ("skip the
# referral if it is a duplicate" works on "referral").
CLAUSE_WORDS = frozenset(
    words(
        "if unless when whenever whether until while because so or and but except only not "
        "never without once"
    )
)
