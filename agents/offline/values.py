"""What the words after "is" in a stated condition mean (:mod:`agents.offline.conditions`).

One plain value ("BlueCross HMO", "zero", "true"), a list of them ("HMO or PPO", "one of A,
B", "neither A nor B"), everything but one ("anything but closed"), a comparison with a
number ("over 500", "at least five", "65 or older", "no more than 10") or the field being
there or not ("empty", "set"). Anything else -- "a minor", "no longer HMO", "the same as the
old plan", "urgent or the patient is a child", "over the limit" -- is :class:`Unclear`, with
the reason: the reader asks instead of writing it down as a string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline.grammar import VERBS, imperative, js_string, words


class Unclear(Exception):
    """A stated condition that cannot be written down: a pronoun with nothing to stand for,
    or a value that is not one value of the field (``reason`` says why)."""

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason


INVERSE = {">": "<=", "<": ">=", ">=": "<", "<=": ">"}


@dataclass(frozen=True)
class Value:
    """What a stated value means: one value or a list of them (kind "is": ``===`` joined
    with ``||``, or ``!==`` joined with ``&&``), a comparison with a number ("compare"), or
    the field being there or not ("presence": op "present" / "absent")."""

    kind: str
    op: str = "==="
    items: tuple[str, ...] = ()
    """JS literals."""
    names: tuple[str, ...] = ()
    """The items as said (for the label)."""
    bare: bool = False
    """Plain unquoted words: one adjective may be a yes/no flag ("eligible")."""
    age: bool = False
    """A comparison of ages ("older than"): only the age itself can be compared so."""

    @property
    def words(self) -> str:
        names = list(self.names)
        return either(names) if self.op == "===" else _neither_words(names)

    @property
    def opposite_words(self) -> str:
        names = list(self.names)
        return _neither_words(names) if self.op == "===" else either(names)

    def opposite(self, said: str) -> Value:
        if self.kind == "compare":
            inverse = "!==" if self.op == "===" else INVERSE[self.op]
            return Value("compare", inverse, self.items, self.names, age=self.age)
        if self.kind == "presence":
            return Value("presence", "absent" if self.op == "present" else "present")
        if self.op == "!==":
            raise Unclear(f'"not {said}" says "not" twice')
        if len(self.items) > 1:
            raise Unclear(
                f'"not {said}" can mean "not any of them" or "not {self.names[0]}, or '
                f'{either(list(self.names[1:]))}": say "neither A nor B" or "none of A, B, C"'
            )
        return Value("is", "!==", self.items, self.names, self.bare)


def ends_early(value: str) -> bool:
    """Whether the start of ``value`` reads as a value and the rest starts a new clause
    ("65 or older email the team"): the condition ends before the rest, which is for the
    caller (it splits there, or understands nothing)."""
    tokens = value.split()
    for i in range(1, len(tokens)):
        following = tokens[i].lower().strip(",")
        if following in _CONNECTIVES or following in _UNITS_OF:
            continue
        try:
            read_value(" ".join(tokens[:i]).rstrip(","))
        except Unclear:
            continue
        return True
    return False


def has_action(value: str) -> bool:
    """Whether a verb and its object follow the value ("HMO email the team")."""
    tokens = value.split()
    return any(
        imperative(tokens[i]).lower() in VERBS and tokens[i + 1].lower() in _OBJECT_START
        for i in range(1, len(tokens) - 1)
    )


_OBJECT_START = frozenset(words("the a an it them this that him her us everyone all to"))
_UNITS_OF = frozenset(
    words(
        "day days week weeks month months year years hour hours minute minutes second seconds "
        "dollar dollars usd euro euros pound pounds percent % item items time times old kg lb "
        "lbs km miles"
    )
)
# Words that make a phrase something other than one plain value ("no longer HMO", "the same
# as the old plan", "urgent or the patient is a child", "still pending": a value over time).
_CONNECTIVES = frozenset(
    words(
        "or nor either neither but except than not no never longer same if when whenever then "
        "unless whether because while any anything something everything nothing none all every "
        "each both is are was were be been equal equals like different other as it they this "
        "these those he she we you between and still yet already anymore again ever currently "
        "now usually sometimes often"
    )
)
_ABSENT = frozenset(words("empty missing blank null absent unset undefined"))
_PRESENT = frozenset(words("present set filled provided defined populated"))


# ---------------------------------------------------------------- values

_UNITS = {
    w: i
    for i, w in enumerate(
        words(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen"
        )
    )
}
_TENS = {
    w: 10 * (i + 2)
    for i, w in enumerate(words("twenty thirty forty fifty sixty seventy eighty ninety"))
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_DIGITS = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")


def number_literal(text: str) -> str | None:
    """A JS number literal for "500", "1,000", "$20", "2.5", "zero", "twenty-one",
    "five hundred", "a thousand"; None for anything else."""
    text = text.strip().lower()
    text = re.sub(r"^[$€£]\s*", "", text)
    if _DIGITS.fullmatch(text):
        return text.replace(",", "")
    tokens = [t for t in re.split(r"[\s-]+", text) if t]
    if len(tokens) > 1 and tokens[0] in ("a", "an") and tokens[1] in _SCALES:
        tokens[0] = "one"
    if not tokens:
        return None
    total = current = 0
    last = ""
    for token in tokens:
        if token in _UNITS and last in ("", "tens", "scale"):
            current += _UNITS[token]
            last = "unit" if _UNITS[token] < 10 or last == "tens" else "teen"
        elif token in _TENS and last in ("", "scale"):
            current += _TENS[token]
            last = "tens"
        elif token == "hundred" and last in ("unit", "teen") and current < 100:
            current *= 100
            last = "scale"
        elif token in ("thousand", "million") and last in ("unit", "teen", "tens", "scale"):
            total += current * _SCALES[token]
            current = 0
            last = "scale"
        else:
            return None
        if last == "unit" and token in _UNITS and _UNITS[token] >= 10:
            last = "teen"
    return str(total + current)


_MORE = r"more|greater|higher|bigger|larger|longer|heavier"
_LESS = r"less|fewer|lower|smaller|shorter|lighter"
# A comparison word before the number ("over 500", "at least 5", "older than 65"): the JS
# operator, and whether it compares ages.
_BEFORE_NUMBER: list[tuple[str, str, bool]] = [
    (
        rf"(?:{_MORE})\s+than\s+or\s+equal\s+to|no\s+(?:{_LESS})\s+than|not\s+(?:{_LESS})\s+than"
        r"|at\s+least|not\s+under|not\s+below|a\s+minimum\s+of|minimum",
        ">=",
        False,
    ),
    (
        rf"(?:{_LESS})\s+than\s+or\s+equal\s+to|no\s+(?:{_MORE})\s+than|not\s+(?:{_MORE})\s+than"
        r"|at\s+most|not\s+over|not\s+above|up\s+to|a\s+maximum\s+of|maximum",
        "<=",
        False,
    ),
    (r"no\s+older\s+than|not\s+older\s+than", "<=", True),
    (r"no\s+younger\s+than|not\s+younger\s+than", ">=", True),
    (
        rf"(?:{_MORE})\s+than|over|above|in\s+excess\s+of|exceeding|beyond|after|later\s+than",
        ">",
        False,
    ),
    (rf"(?:{_LESS})\s+than|under|below|before|earlier\s+than", "<", False),
    (r"older\s+than", ">", True),
    (r"younger\s+than", "<", True),
    (r"equal\s+to|exactly|the\s+same\s+as", "===", False),
]
# ... or after it ("65 or older", "5 and over", "18+").
_AFTER_NUMBER = re.compile(
    rf"^(?P<n>.+?)\s*(?:(?:\s+or|\s+and)\s+(?:(?P<up>{_MORE}|above|over|up|later|after)"
    rf"|(?P<old>older)|(?P<down>{_LESS}|below|under|earlier|before)|(?P<young>younger))"
    r"|(?P<plus>\+))$",
    re.I,
)
_LIST_LEAD = re.compile(
    r"^(?:(?P<pos>either|one\s+of|any\s+of|any\s+one\s+of)"
    r"|(?P<neg>neither|none\s+of|not\s+one\s+of|not\s+any\s+of))\s+(?P<rest>.+)$",
    re.I,
)
_OTHER_THAN = re.compile(
    r"^(?:(?:anything|everything|something|any\s+value)\s+(?:but|except|other\s+than|besides"
    r"|else\s+than)|other\s+than|different\s+(?:from|than)|not\s+equal\s+to)\s+(?P<rest>.+)$",
    re.I,
)
_LIST_SPLIT = re.compile(r"\s*,\s*(?:(?:or|nor)\s+)?|\s+(?:or|nor)\s+", re.I)
_CLAUSE_VERB = re.compile(r"\b(?:is|are|was|were|has|have|equals|contains)\b", re.I)


def read_value(value: str) -> Value:
    """What the words after "is" mean (see :class:`Value`); raises :class:`Unclear` when
    they are not one plain value, a list of them, or a comparison with a number."""
    low = " ".join(value.lower().split())
    if low in ("true", "yes"):
        return Value("is", "===", ("true",), (value,))
    if low in ("false", "no"):
        return Value("is", "===", ("false",), (value,))
    number = number_literal(low)
    if number is not None:
        return Value("is", "===", (number,), (value,))
    if low in _ABSENT:
        return Value("presence", "absent")
    if low in _PRESENT or low in ("filled in", "filled out"):
        return Value("presence", "present")
    for words_before, op, age in _BEFORE_NUMBER:
        found = re.fullmatch(rf"(?:{words_before})\s+(?P<rest>.+)", low)
        if found is None:
            continue
        rest = value.strip()[len(value.strip()) - len(found.group("rest")) :]
        if op == "===":
            if re.match(r"(?:a|an|the|its|their|his|her)\s", found.group("rest")):
                raise Unclear(f'"{value}" compares with another field, not a value')
            return read_value(rest)
        number = number_literal(found.group("rest"))
        if number is None:
            raise Unclear(f'"{value}" compares with "{rest}", which is not a plain number')
        return Value("compare", op, (number,), (value,), age=age)
    after = _AFTER_NUMBER.match(low)
    if after:
        number = number_literal(after.group("n"))
        if number is None:
            raise Unclear(f'"{value}" compares with "{after.group("n")}", which is not a number')
        up = after.group("up") or after.group("old") or after.group("plus")
        age = bool(after.group("old") or after.group("young"))
        return Value("compare", ">=" if up else "<=", (number,), (value,), age=age)
    if low.startswith("between "):
        raise Unclear(
            f'"{value}" leaves open whether the ends count: say e.g. "the age is at least 5 '
            'and the age is at most 10"'
        )
    other = _OTHER_THAN.match(value.strip())
    if other:
        inner = read_value(other.group("rest"))
        if inner.kind != "is" or inner.op != "===":
            raise Unclear(f'"{value}" is not one value or a list of values')
        return Value("is", "!==", inner.items, inner.names)
    if re.search(r"\b(?:or|nor)\b|,", low) or _LIST_LEAD.match(value.strip()):
        return _list(value.strip())
    return Value("is", "===", (_plain(value),), (value.strip(),), bare=True)


def _list(value: str) -> Value:
    lead = _LIST_LEAD.match(value)
    rest = lead.group("rest") if lead else value
    negative = bool(lead and lead.group("neg"))
    parts = [p.strip() for p in _LIST_SPLIT.split(rest)]
    if any(_CLAUSE_VERB.search(p) for p in parts):
        raise Unclear(
            '"or" there joins two checks, and I can only join checks with "and" (or write '
            "the condition as JavaScript)"
        )
    if len(parts) < 2 or not all(parts):
        raise Unclear(f'"{value}" is not a list of values I can read')
    if not re.search(r"\b(?:or|nor)\b", rest, re.I) and not lead:
        raise Unclear(f'"{value}" lists values without "or": must it be one of them?')
    items: list[str] = []
    for part in parts:
        reading = read_value(part)
        if reading.kind != "is" or len(reading.items) != 1 or reading.op != "===":
            raise Unclear(f'"{part}" in "{value}" is not one plain value')
        items.append(reading.items[0])
    return Value("is", "!==" if negative else "===", tuple(items), tuple(parts), bare=True)


# Words a plain value does not start with: they compare ("over", "older than ...").
_COMPARING = frozenset(
    words(
        "over under above below before after more less fewer greater higher lower bigger "
        "larger smaller older younger exactly up exceeding beyond minimum maximum later earlier"
    )
)


def _plain(value: str) -> str:
    """One plain value as a JS string literal; raises :class:`Unclear` for words that make
    it something else ("a minor", "no longer HMO", "the same as the old plan")."""
    tokens = re.findall(r"[\w'-]+", value.lower())
    if not tokens:
        raise Unclear(f'"{value}" is not a value')
    if tokens[0] in ("a", "an", "the"):
        raise Unclear(
            f'"{value}" describes a kind of thing, not a value the field holds; name the field '
            'and the value it has (e.g. "when the age group is child", "when the duplicate '
            'flag is true")'
        )
    if tokens[0] in _COMPARING:
        raise Unclear(f'"{value}" compares with something that is not a plain number')
    if len(tokens) > 1 and number_literal(tokens[0]) is not None and tokens[1] in _UNITS_OF:
        raise Unclear(f'"{value}" is an amount with a unit; I can only compare plain numbers')
    odd = [t for t in tokens if t in _CONNECTIVES]
    if odd:
        raise Unclear(f'"{value}" is not one plain value (because of "{odd[0]}")')
    return js_string(value.strip())


def either(items: list[str]) -> str:
    if len(items) <= 2:
        return " or ".join(items)
    return ", ".join(items[:-1]) + f" or {items[-1]}"


def _neither_words(items: list[str]) -> str:
    if len(items) == 1:
        return f"not {items[0]}"
    if len(items) == 2:
        return f"neither {items[0]} nor {items[1]}"
    return "none of " + ", ".join(items)


_FIELDS = frozenset(
    words(
        "status state type plan code category result value level priority payer insurance "
        "gender country stage mode kind outcome source channel language region district"
    )
)
_ADJECTIVE = re.compile(
    r"^[a-z]+(?:ible|able|ive|ed|ent|ant|id|ete|ue|ing)$|^(?:new|open|late|found|known|done|paid"
    r"|sent|seen|given|taken|signed|urgent)$"
)
# Who or what a record is about: "the patient is over 65" compares some field of it.
RECORDS = frozenset(
    words(
        "patient patients person people client clients customer customers member members user "
        "users child children baby infant mother woman man participant beneficiary applicant "
        "student employee resident household family referral referrals claim claims record "
        "records case cases form forms submission submissions order orders request requests "
        "visit encounter appointment application entry row item document file message"
    )
)


def is_flag(subject: str, value: str) -> bool:
    """'the patient is eligible' is a yes/no flag; 'the status is active' is a value."""
    last = subject.lower().split()[-1]
    plain = value.lower()
    if plain in ("true", "false", "yes", "no") or number_literal(plain) is not None:
        return False
    return last not in _FIELDS and bool(_ADJECTIVE.match(plain))


def plainly(value: str) -> str:
    """An age comparison in words that fit any field: "older than 65" -> "over 65"."""
    value = re.sub(r"\bolder\s+than\b", "over", value, flags=re.I)
    value = re.sub(r"\byounger\s+than\b", "under", value, flags=re.I)
    return re.sub(r"\b(?:older|younger)\b", lambda m: "over" if m[0][0] in "oO" else "under", value)
