"""Adaptor words: which adaptor a phrase names or implies.

Every catalogue short name is recognised ("http", "fhir", "dhis2", ...), plus
everyday aliases ("email" -> gmail, "sheet" -> googlesheets, "sms" -> twilio,
"epic" -> fhir, "postgres"/"sql"/"database" -> postgresql, ...).
"""

from __future__ import annotations

import functools
import re

from agents.offline.grammar import unquote
from agents.offline.words import PRONOUN_OBJECTS
from tools.catalogue.adaptors import load_catalogue

# Words that suggest an adaptor, mapped to catalogue short names. Short names of every
# catalogue adaptor are recognised too.
ALIASES: dict[str, str] = {
    "api": "http",
    "rest": "http",
    "https": "http",
    "url": "http",
    "endpoint": "http",
    "webhook call": "http",
    "portal": "http",
    "epic": "fhir",
    "ehr": "fhir",
    "emr": "fhir",
    "email": "gmail",
    "emails": "gmail",
    "e-mail": "gmail",
    "mail": "gmail",
    "inbox": "gmail",
    "sheet": "googlesheets",
    "sheets": "googlesheets",
    "google sheets": "googlesheets",
    "google sheet": "googlesheets",
    "spreadsheet": "googlesheets",
    "dhis": "dhis2",
    "sfdc": "salesforce",
    "postgres": "postgresql",
    "sql": "postgresql",
    "database": "postgresql",
    "db": "postgresql",
    "sql server": "mssql",
    "kobo": "kobotoolbox",
    "kobo toolbox": "kobotoolbox",
    "sms": "twilio",
    "text message": "twilio",
    "outlook": "msgraph",
    "microsoft": "msgraph",
    "teams": "msgraph",
    "sharepoint": "msgraph",
    "onedrive": "msgraph",
    "ftp": "sftp",
    "odk central": "odk",
}
# Aliases that are plain English words: recognised, but kept in step names.
_NATURAL = frozenset(
    {"email", "emails", "e-mail", "mail", "inbox", "sheet", "sheets", "spreadsheet", "epic"}
    | {"database", "db", "portal", "sms", "text message", "teams", "endpoint", "url"}
)


@functools.cache
def adaptor_words() -> dict[str, str]:
    """Every recognised adaptor word (lower case) -> catalogue short name."""
    catalogue = load_catalogue()
    words = {a.short_name: a.short_name for a in catalogue.adaptors.values()}
    words.update({alias: short for alias, short in ALIASES.items() if catalogue.get(short)})
    return words


@functools.cache
def _alternatives() -> str:
    names = sorted(adaptor_words(), key=len, reverse=True)
    return "|".join(re.escape(n) for n in names)


@functools.cache
def _adaptor_pattern() -> re.Pattern[str]:
    return re.compile(rf"(?<![\w@/-])({_alternatives()})(?:@([\w.]+))?(?![\w-])", re.I)


def resolve_adaptor_word(word: str) -> str | None:
    """``'http'``, ``'email'``, ``'@openfn/language-fhir'``, ``'http@6.5.1'`` -> adaptor spec."""
    word = re.sub(r"^the\s+|\s+(?:adaptor|connector)$", "", unquote(word).lower()).strip()
    if word.startswith("@"):
        base, _, version = word[1:].partition("@")
        base = "@" + base
    else:
        base, _, version = word.partition("@")
    short = adaptor_words().get(base)
    if short is None:
        adaptor = load_catalogue().get(base)
        short = adaptor.short_name if adaptor else None
    if short is None:
        return None
    return f"{short}@{version}" if version else short


_MARKER = r"(?:with|using|via|through|over|in|on|from|into|to)"
# A tool named after these is named on purpose ("over http"); after in/on/from/into/to
# it may be a place ("from the EHR"), so an explicit "with/over X" elsewhere wins.
_STRONG = ("with", "using", "via", "through", "over")


@functools.cache
def _explicit_pattern() -> re.Pattern[str]:
    return re.compile(
        rf"\s*[,(]?\s*\b(?P<marker>{_MARKER})\s+(?:the\s+|an?\s+)?(?P<word>{_alternatives()})"
        rf"(?:@(?P<version>[\w.]+))?(?:\s+(?:adaptor|connector|api|integration))?\s*\)?(?![\w-])",
        re.I,
    )


def explicit_adaptors(text: str) -> list[tuple[str, str]]:
    """Adaptors a text names on purpose: ("with twilio", "twilio"), ("(fhir)", "fhir")."""
    words = adaptor_words()
    found: list[tuple[str, str]] = []
    for match in _explicit_pattern().finditer(text):
        if match.group("marker").lower() in _STRONG:
            found.append((match.group(0).strip(" ,"), words[match.group("word").lower()]))
    for bracket in re.finditer(rf"\((?P<word>{_alternatives()})\)", text, re.I):
        found.append((bracket.group(0), words[bracket.group("word").lower()]))
    return found


def named_adaptors(text: str) -> frozenset[str]:
    """Every system a phrase names: adaptor names and technical aliases anywhere, plain
    words ("email", "portal") only when named on purpose ("with the portal")."""
    words = adaptor_words()
    explicit = {short for _, short in explicit_adaptors(text)}
    found = set(explicit)
    for m in _adaptor_pattern().finditer(text):
        word = m.group(1).lower()
        if word in _NATURAL or (explicit and word in ALIASES):
            # "from the EHR over http": with a tool named on purpose, an alias is a place.
            continue
        found.add(words[word])
    return frozenset(found)


def find_adaptor(text: str) -> tuple[str | None, str]:
    """The adaptor a phrase names or implies, and the phrase without a purely technical
    adaptor mention ("with gmail", "(fhir)", "using the http adaptor").

    An adaptor named after with/using/via/through (or in brackets) wins; otherwise the
    first adaptor word in the text.
    """
    words = adaptor_words()
    alt = _alternatives()
    matches = list(_explicit_pattern().finditer(text))
    matches.sort(key=lambda m: m.group("marker").lower() not in _STRONG)
    for match in matches:
        marker = match.group("marker").lower()
        word = match.group("word").lower()
        version = match.group("version")
        if marker not in _STRONG[:4] and word in _NATURAL:
            continue
        short = words[word]
        spec = f"{short}@{version}" if version else short
        if marker not in _STRONG and re.match(r"\s+[A-Za-z]", text[match.end() :]):
            # "into FHIR bundles", "to the DHIS2 data values": the system names a thing
            # that stays in the step's name.
            return spec, text
        stripped = (text[: match.start()] + text[match.end() :]).strip(" ,")
        meaningful = [w for w in stripped.split() if w.lower() not in PRONOUN_OBJECTS]
        if len(meaningful) < 2 and marker not in _STRONG:
            stripped = text
        return spec, stripped
    bracket = re.search(rf"\s*\((?P<word>{alt})\)", text, re.I)
    if bracket:
        return words[bracket.group("word").lower()], (
            text[: bracket.start()] + text[bracket.end() :]
        ).strip()
    found = _adaptor_pattern().search(text)
    if found:
        short = words[found.group(1).lower()]
        version = found.group(2)
        return (f"{short}@{version}" if version else short), text
    return None, text
