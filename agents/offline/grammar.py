"""Text handling shared by the offline model's parsers.

Everything works on the user's own text with case-insensitive regexes, so
names keep the user's capitalisation. Nothing here looks at the workflow.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agents.offline.words import ARTICLES as ARTICLE_WORDS
from agents.offline.words import PRONOUN_OBJECTS, STOPWORDS, alternation
from tools.document.names import sanitise_name

_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "`": "'", "«": '"', "»": '"'})
_POLITE = re.compile(
    r"^(?:please|pls|kindly|hey|hi|ok(?:ay)?|so|now|also|and|then|alright|great|thanks,?"
    r"|can you|could you|would you|will you|can we|could we|i want to|i'd like to"
    r"|i would like to|i need to|we need to|let's|lets|let us|go ahead and|just|i want you to"
    r"|help me)\b[\s,:]*",
    re.I,
)
_TRAILING = re.compile(r"[\s.!?,;:]*(?:\bplease\b|\bthanks\b|\bthank you\b)?[\s.!?,;:]*$", re.I)
QUOTED = re.compile(r"\"([^\"]+)\"|(?<![A-Za-z])'([^']+)'(?![A-Za-z])")
ARTICLES = re.compile(rf"\b(?:{alternation(ARTICLE_WORDS)})\s+", re.I)


def words(text: str) -> list[str]:
    """A word list written as one string (keeps long vocabularies compact)."""
    return text.split()


def clean(text: str) -> str:
    """Unify quotes and spaces (newlines are kept: they separate SOP lines)."""
    text = text.translate(_QUOTES).replace("\r\n", "\n").replace("\t", " ")
    lines = [re.sub(r" {2,}", " ", line).strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def strip_polite(text: str) -> str:
    """Drop "please", "can you", "let's" and the like from both ends."""
    previous = None
    text = text.strip()
    while previous != text:
        previous = text
        text = _POLITE.sub("", text).strip()
        text = _TRAILING.sub("", text).strip()
    return text


def unquote(text: str) -> str:
    text = text.strip().strip(".,;:!?").strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1].strip()
    return text


_QUOTED_HEAD = re.compile(r"^(?:\"(?P<double>[^\"]+)\"|'(?P<single>[^']+)')(?![A-Za-z])", re.S)
_CLAUSE_WORDS = r"and|then|but|if|when|unless|so"
_CLAUSE = re.compile(rf"\s*(?:[,;]|\.(?=\s|$))\s*|\s+(?=(?:{_CLAUSE_WORDS})\b)", re.I)


def name_and_rest(text: str) -> tuple[str, str]:
    """A new name and what follows it: 'Text patient and then X' -> ('Text patient',
    'and then X'). An unquoted name stops at a clause word (and, then, but, if, when,
    unless, so) or at ',', ';' or '.'; a quoted one at its closing quote. ``rest`` is a
    suffix of ``text`` ('' when the name is all of it)."""
    text = text.strip()
    quoted = _QUOTED_HEAD.match(text)
    if quoted:
        name = quoted.group("double") or quoted.group("single") or ""
        return name.strip(), text[quoted.end() :].strip()
    clause = _CLAUSE.search(text)
    if clause and clause.start() > 0:
        return unquote(text[: clause.start()]), text[clause.start() :].strip()
    return unquote(text), ""


def norm(text: str) -> str:
    """Lower-case words only: 'Check-coverage' -> 'check coverage'."""
    ascii_text = sanitise_name(without_apostrophes(text).replace("_", " ").replace("-", " "))
    return " ".join(ascii_text.lower().split())


def split_at(text: str, separator: str) -> Iterator[tuple[str, str]]:
    """Every way to split ``text`` at a whole-word ``separator``, left-most first. A quoted
    name is taken literally: no split falls inside quotes ("'Go to portal' to 'Open'")."""
    pattern = re.compile(rf"\s+(?:{separator})\s+", re.I)
    inside = [(m.start(), m.end()) for m in QUOTED.finditer(text)]
    for match in pattern.finditer(text):
        if any(start < match.start() < end for start, end in inside):
            continue
        left, right = text[: match.start()].strip(), text[match.end() :].strip()
        if left and right:
            yield left, right


_LOOSE_QUOTE = re.compile(r"\"|(?<![A-Za-z])'")


def has_loose_quote(text: str) -> bool:
    """A double quote or an opening single quote (not an apostrophe: "payer's", "payers'
    office"): a name holding one was cut out of a phrase that quotes a name."""
    return bool(_LOOSE_QUOTE.search(text))


# --------------------------------------------------------------------------- step names

_POSSESSIVE = re.compile(r"(?<=[A-Za-z])['’]s\b|(?<=[A-Za-z]s)['’](?![A-Za-z])")
_INNER_APOSTROPHE = re.compile(r"(?<=[A-Za-z])['’](?=[A-Za-z])")


def without_apostrophes(text: str) -> str:
    """OpenFn names hold no apostrophes, and turning one into a space breaks the word
    ("payer's" -> "payer s"): a possessive is dropped ("the patient's insurance" ->
    "the patient insurance", "the payers' office" -> "the payers office"), any other
    apostrophe joins its word ("don't" -> "dont")."""
    return _INNER_APOSTROPHE.sub("", _POSSESSIVE.sub("", text))


def fit_name(raw: str) -> str:
    """A name the user gave, as OpenFn's name rule allows it (letters, digits, spaces, "-"
    and "_"), without breaking possessives: "Check patient's insurance" -> "Check patient
    insurance". '' when nothing of it is allowed."""
    return sanitise_name(without_apostrophes(raw))


NAME_RULE = "OpenFn names allow letters, digits, spaces, - and _"
_NAME_NOTE = re.compile(r'Named it "(?P<name>[^"]+)" \(' + re.escape(NAME_RULE) + r"\)\.")


def name_note(typed: str, fitted: str) -> str:
    """What a name the user typed became, and why, when OpenFn's name rule changed it
    ("Check patient's insurance" -> 'Named it "Check patient insurance" (OpenFn names
    allow ...).'); '' when it is kept as typed (spaces aside) or nothing of it fits."""
    if not fitted or fitted == " ".join(typed.split()):
        return ""
    return f'Named it "{fitted}" ({NAME_RULE}).'


def name_notes(text: str) -> list[tuple[str, str]]:
    """The (note, name) of each :func:`name_note` said in ``text``, once each."""
    found = {m.group(0): m.group("name") for m in _NAME_NOTE.finditer(text)}
    return list(found.items())


SUBJECT = re.compile(
    r"^(?:(?:and|then|next|finally|first|firstly|second|secondly|lastly|last|also|after that"
    r"|afterwards|once done|once that's done)\b[\s,]*)*"
    r"(?:(?:i|we|you|they|the system|someone|somebody|the coordinator|staff)\s+)?"
    r"(?:(?:have to|need to|needs to|must|should|will|would|can|then|just|also|always|first"
    r"|usually|typically|normally|simply|go and|go ahead and|want to|wants to|try to|'ll)\s+)*",
    re.I,
)
_CUT = re.compile(
    r"\s+(?:before|because|so that|so|which|since|in order to|once|unless|until|while|where"
    r"|as soon as|whenever|otherwise)\s+.*$|\s*[(:].*$|\s+-\s+.*$",
    re.I,
)
_IRREGULAR = {"does": "do", "goes": "go", "has": "have", "is": "be", "tries": "try"}
MAX_NAME_WORDS = 8


def imperative(word: str) -> str:
    """'checks' -> 'check', 'fetches' -> 'fetch', 'queries' -> 'query'."""
    low = word.lower()
    if low in _IRREGULAR:
        result = _IRREGULAR[low]
    elif low.endswith("ies") and len(low) > 4:
        result = low[:-3] + "y"
    elif low.endswith(("sses", "shes", "ches", "xes", "zes")):
        result = low[:-2]
    elif low.endswith("s") and not low.endswith(("ss", "us", "is", "ys")) and len(low) > 3:
        result = low[:-1]
    else:
        return word
    return result if word.islower() else result.capitalize() if word[0].isupper() else result


def step_name(phrase: str) -> str:
    """A short display name from a clause: 'I then check the insurance in Epic' ->
    'Check insurance in Epic'."""
    return named_step(phrase)[0]


def named_step(phrase: str) -> tuple[str, str]:
    """:func:`step_name`, and the words of the clause the name left out: a clause it ends
    before ("so it only runs ...", "unless ...", "(...)") and the words past the length
    limit; '' when it holds them all."""
    name, tail, overflow = name_parts(phrase)
    return name, " ".join(p for p in (overflow, tail) if p)


def name_parts(phrase: str) -> tuple[str, str, str]:
    """:func:`step_name` with what it left out, apart: (name, the clause it ends before,
    the words past the length limit)."""
    text = without_apostrophes(unquote(phrase))
    text = SUBJECT.sub("", text).strip()
    cut = _CUT.search(text)
    tail = text[cut.start() :].strip() if cut else ""
    text = text[: cut.start()].strip() if cut else text
    words = [w for w in ARTICLES.sub("", text + " ").split() if w]
    if len(words) > 2:
        words = [words[0]] + [w for w in words[1:] if w.lower() not in PRONOUN_OBJECTS]
    if not words:
        return "", tail, ""
    words[0] = imperative(words[0])
    overflow = ""
    if len(words) > MAX_NAME_WORDS:
        kept = _shortened(words)
        overflow = " ".join(words[len(kept) :])
        words = kept
    while len(words) > 1 and words[-1].lower() in STOPWORDS:
        words.pop()
    name = sanitise_name(" ".join(words))
    return name[:1].upper() + name[1:], tail, overflow


def _shortened(words: list[str]) -> list[str]:
    """A name too long to keep whole ends before a phrase, never inside one: "Look up
    patient by name and date of birth" -> "Look up patient" (cutting at the word limit
    would give "... by name and date", a different thing). "of" binds a phrase to the word
    before it ("date of birth"), so it never starts one."""
    starts = [
        i
        for i, w in enumerate(words[: MAX_NAME_WORDS + 1])
        if i >= 2 and w.lower() in PHRASE_STARTS
    ]
    return words[: starts[-1]] if starts else words[:MAX_NAME_WORDS]


PHRASE_STARTS = frozenset(
    words("from to in into with by via on for at through using about over under per within")
)
VERBS = frozenset(
    words(
        "get fetch pull check verify send email notify alert submit attach create update "
        "upsert save store post push load read query look validate transform map clean "
        "dedupe dedup filter log record schedule assign call text move upload download sync "
        "export import generate review approve flag escalate mark close open add remove "
        "delete confirm request collect compute calculate merge match register enroll book "
        "print archive publish forward route convert format parse extract write find search "
        "retrieve tag go insert prepare build reply respond enrich lookup cancel report "
        "count sort group aggregate summarise summarize notify message ping wait sign share "
        "copy backup back fill complete"
    )
)
_SUBJECT_WORD = re.compile(r"^(?:i|we|you|they|then|also|just)\s+", re.I)


def split_actions(clause: str) -> list[str]:
    """Split at ' and ' where a new verb phrase starts ('pull X and check Y')."""
    parts: list[str] = []
    current = clause
    for left, right in list(split_at(clause, "and")):
        head = _SUBJECT_WORD.sub("", right).split()
        tail = current[: len(current) - len(right)] if current.endswith(right) else None
        if not head or tail is None:
            continue
        if imperative(head[0]).lower() in VERBS and len(left.split()) >= 2:
            piece = re.sub(r"\s+and\s*$", "", tail.strip(), flags=re.I).strip()
            if len(piece.split()) >= 2:
                parts.append(piece)
                current = right
    parts.append(current)
    return [p for p in (part.strip() for part in parts) if p]


def camel(text: str) -> str:
    """'plan code' -> 'planCode' (a JS property name)."""
    words = re.findall(r"[A-Za-z0-9]+", ARTICLES.sub("", text + " "))
    if not words:
        return "value"
    head, *rest = words
    result = head.lower() + "".join(w[:1].upper() + w[1:].lower() for w in rest)
    return result if result[0].isalpha() else f"field{result}"


def js_string(value: str) -> str:
    """A single-quoted JavaScript string literal."""
    escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", " ")
    return f"'{escaped}'"


def oxford(items: list[str], conjunction: str = "and") -> str:
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return f"{items[0]} {conjunction} {items[1]}"
    return ", ".join(items[:-1]) + f", {conjunction} {items[-1]}"
