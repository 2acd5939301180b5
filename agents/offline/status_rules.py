"""Status preconditions and per-type rule tables, as experts say them.

Transitions (``add_status_transition``): "advance the referral to active only when
coverage is verified and the documents are attached, otherwise put it on hold",
"don't move the order to shipped unless it is paid and packed; else on-hold",
"the workflow won't advance a referral to `active` unless coverage is verified and
required documents are attached, otherwise on-hold", "mark the claim approved unless
it is flagged, else pending" (a plain "unless" negates the check). Every check must
hold ("and"); "or", no other status, or a negated lead with "when" asks instead.

Rule tables (``add_rule_table``): rows separated by ";", "." or new lines, each "<type>
needs|requires <items>" (after the first, the verb may be left out: "behavioral health
a clinical summary, no labs"); "no X" / "but not X" / "not X" is what the type does not
need. "For each referral in the batch" (or "for every ...") checks a list item by item.
Every sentence must be a row (or that "for each" lead), else it is not a table.
"""

from __future__ import annotations

import re
from typing import Any

from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.references import Found, NeedsAnswer, Resolver, explain
from agents.offline.view import View
from tools.edits.add_status_transition import flag_name

_STATUS = r"[`'\"]?(?P<{0}>[a-z][\w-]*(?:\s+hold)?)[`'\"]?"
_NEG = r"(?P<neg>don'?t|do\s+not|never|won'?t|will\s+not|shouldn'?t|should\s+not|must\s+not)"
_VERB = r"(?:advance|move|set|transition|change|mark|promote|switch|put|update)"
_TRANSITION = re.compile(
    rf"^(?:(?:the\s+)?(?:workflow|system|it|we)\s+)?(?:{_NEG}\s+)?(?:only\s+)?{_VERB}s?\s+"
    rf"(?:(?:the|a|an|each|every)\s+)?(?P<subject>[a-z][\w -]*?)\s+(?:to|as|into)\s+"
    + _STATUS.format("status")
    + r"(?:\s+status)?\s*,?\s+(?:only\s+)?(?P<kw>when|if|once|unless)\s+(?P<checks>[^.;!?\n]+?)"
    r"(?:\s*[,;.]?\s*(?:(?:and\s+)?(?:otherwise|else|if\s+not)\s*,?\s*)(?P<other>.+?))?"
    r"(?:\s+after\s+(?P<after>[^,;]+?))?[.!]?$",
    re.I,
)
# "the referral should only go to active when ...", "a referral moves to active only if ...".
_GOES_TO = re.compile(
    r"^(?:the|a|an|each|every)\s+(?P<subject>[a-z][\w -]*?)\s+(?:(?P<neg>never|must\s+not|"
    r"should\s+not|shouldn'?t|can'?t|cannot|won'?t)\s+)?(?:(?:should|must|can|may|will)\s+)?"
    r"(?:only\s+)?(?:go(?:es)?|moves?|advances?|transitions?|changes?|be\s+(?:set|moved|advanced|"
    r"marked))\s+(?:to|as|into)\s+"
    + _STATUS.format("status")
    + r"(?:\s+status)?\s*,?\s+(?:only\s+)?(?P<kw>when|if|once|unless)\s+(?P<checks>[^.;!?\n]+?)"
    r"(?:\s*[,;.]?\s*(?:(?:and\s+)?(?:otherwise|else|if\s+not)\s*,?\s*)(?P<other>.+?))?"
    r"(?:\s+after\s+(?P<after>[^,;]+?))?[.!]?$",
    re.I,
)
_OTHER = re.compile(
    r"^(?:(?:set|move|put|mark|leave|keep|change)\s+(?:it|them|the\s+[\w ]+?)"
    r"(?:\s+(?:to|as|in|at|on(?!\s+hold)))?\s+)?(?:to\s+)?[`'\"]?(?P<status>[a-z][\w-]*(?:\s+hold)?)[`'\"]?$",
    re.I,
)
_CHECK_LEAD = re.compile(
    r"^(?:the\s+|its\s+|their\s+|all\s+(?:the\s+)?|required\s+"
    r"|(?:it|they)\s+(?:is|are|has\s+been|have\s+been|was|were)\s+)+",
    re.I,
)

_ROW = re.compile(
    r"^(?:for\s+)?(?:an?\s+|the\s+)?(?P<type>[a-z][\w -]{0,40}?)(?:\s+referrals?|\s+cases?"
    r"|\s+orders?)?\s*(?::|\s+(?:needs?|requires?|must\s+have|should\s+have))\s+(?P<items>.+)$",
    re.I,
)
_BARE_ROW = re.compile(
    r"^(?P<type>[a-z][\w -]{0,40}?)\s*,?\s+(?P<items>(?:an?|the|recent|current)\s+.+)$", re.I
)
_EACH = re.compile(
    r"^(?:for\s+)?(?:each|every)\s+(?P<item>[a-z]+?)s?\s+(?:in|of)\s+(?:the\s+)?"
    r"(?:batch|list|file|request|set)\b[^,:]*[,:]?\s*(?P<rest>.*)$",
    re.I | re.S,
)
# A row's type is a noun phrase: words that command or connect mean it is not a table row.
_NOT_A_TYPE = re.compile(
    r"\b(?:add|remove|rename|delete|move|then|step|steps|connect|run|send|create|make|insert|"
    r"use|switch|set|if|when|otherwise|and|it|they|we|i|you|workflow|trigger|edge)\b",
    re.I,
)
_AFTER_LEAD = re.compile(
    r"^(?:add\s+(?:the|these)\s+rules\s+)?after\s+(?P<after>[^:\n]+?)\s*:\s*(?P<rest>.+)$",
    re.I | re.S,
)
_NOT = re.compile(r"^(?:but\s+)?(?:no|not|without)\s+(?P<x>.+)$", re.I)
_QUALIFIER = re.compile(
    r"^(?:an?|the|some|recent|current|valid|up-to-date|up\s+to\s+date)\s+", re.I
)


def transition(text: str, view: View, resolver: Resolver) -> Outcome | None:
    if text.strip().endswith("?"):
        return None
    match = _TRANSITION.match(text.strip()) or _GOES_TO.match(text.strip())
    if match is None:
        return None
    subject = re.sub(r"^(?:the|a|an)\s+", "", match.group("subject").strip(), flags=re.I)
    status = _status(match.group("status"))
    negated_lead = bool(match.group("neg"))
    keyword = match.group("kw").lower()
    if negated_lead and keyword != "unless":
        return _ask(f'"{text.strip()}" says when not to move it, but not when to')
    raw_checks = match.group("checks").strip()
    if re.search(r"\bor\b", raw_checks, re.I):
        return _ask(f'"{raw_checks}" ("or": which checks are needed is not clear)')
    parts = [p for p in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", raw_checks) if p.strip()]
    names = [_CHECK_LEAD.sub("", p.strip()).strip(" .`'\"") for p in parts]
    if not names or any(not n or len(n.split()) > 8 for n in names):
        return _ask(f'the checks "{raw_checks}"')
    checks: list[dict[str, Any]] = [{"name": n} for n in names]
    if keyword == "unless" and not negated_lead:
        # "mark it approved unless it is flagged": every named check must NOT hold.
        checks = [_negated(n) for n in names]
    other_text = (match.group("other") or "").strip()
    other = _OTHER.match(other_text) if other_text else None
    if other is None:
        return _ask(
            f'what status the {subject} gets when a check fails (say "…, otherwise on-hold")'
            if not other_text
            else f'"{other_text}"'
        )
    otherwise = _status(other.group("status"))
    if otherwise == status:
        return _ask(f'"{other_text}" (the same status)')
    if not view.jobs:
        return _ask("which step the checks follow: the workflow has no steps yet")
    after = _after(match.group("after"), view, resolver)
    return Plan(
        [
            call(
                "add_status_transition",
                after=after,
                subject=subject,
                status=status,
                otherwise=otherwise,
                checks=checks,
            )
        ],
        f'After "{view.name_of(after)}" the {subject} moves to {status} only when '
        + " and ".join(c["name"] for c in checks)
        + f"; otherwise to {otherwise}.",
    )


def rule_table(text: str, view: View, resolver: Resolver) -> Outcome | None:
    body = text.strip()
    if body.endswith("?"):
        return None
    items = None
    after_phrase = None
    lead = _AFTER_LEAD.match(body)
    if lead:
        after_phrase, body = lead.group("after"), lead.group("rest")
    each = _EACH.match(body)
    if each:
        items, body = each.group("item").lower() + "s", each.group("rest")
    sentences = [s.strip() for s in re.split(r"\s*(?:;|\.(?:\s+|$)|\n+)\s*", body) if s.strip()]
    rows: list[dict[str, Any]] = []
    for sentence in sentences:
        row = _ROW.match(sentence) or (_BARE_ROW.match(sentence) if rows else None)
        if row is None:
            return None
        requires, not_required = _items(row.group("items"))
        kind = row.group("type").strip().lower()
        if (not requires and not not_required) or len(kind.split()) > 4:
            return None
        if _NOT_A_TYPE.search(kind):
            return None
        rows.append({"when": kind, "requires": requires, "not_required": not_required or None})
    if len(rows) < 2 or len({r["when"] for r in rows}) != len(rows):
        return None
    # Named from the user's own word for what the rows list; nothing is guessed from items.
    documents = re.search(r"\bdocuments?\b", text, re.I) is not None
    name = "Check required documents" if documents else "Check requirements by type"
    calls = []
    after = None
    if view.jobs and after_phrase:
        after = _after(after_phrase, view, resolver)
    elif view.jobs:
        leaves = view.leaves()
        if len(leaves) != 1:
            return Reply(
                "I understood a table of rules by type, but not which step it follows: the "
                "workflow ends in several steps ("
                + ", ".join(f'"{view.name_of(k)}"' for k in leaves)
                + '). I changed nothing; start with "after <step>:" and the rules.',
                asks=True,
            )
        after = leaves[0]
    elif not view.triggers:
        calls.append(call("set_trigger", type="webhook"))
    args: dict[str, Any] = {"name": name, "rows": [_clean_row(r) for r in rows]}
    if after:
        args["after"] = after
    if items:
        args["items"] = items
    calls.append(call("add_rule_table", **args))
    where = f' after "{view.name_of(after)}"' if after else ""
    per = f", for each of the {items}" if items else ""
    return Plan(calls, f'Adding "{name}"{where}{per}: one step whose code holds the table.')


def _clean_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if v is not None}


def _items(text: str) -> tuple[list[str], list[str]]:
    requires: list[str] = []
    not_required: list[str] = []
    for part in re.split(r"\s*,\s*|\s+and\s+|\s+but\s+(?=not\b|no\b)", text.strip(" .")):
        part = part.strip(" .`'\"")
        if not part:
            continue
        negative = _NOT.match(part)
        target = not_required if negative else requires
        word = negative.group("x") if negative else part
        while _QUALIFIER.match(word):
            word = _QUALIFIER.sub("", word, count=1)
        word = word.strip()
        if word:
            target.append(word)
    return requires, not_required


def _status(raw: str) -> str:
    return re.sub(r"\s+", "-", raw.strip().lower())


def _negated(name: str) -> dict[str, Any]:
    return {"name": f"not {name}", "expression": f"state.data?.{flag_name(name)} !== true"}


def _after(phrase: str | None, view: View, resolver: Resolver) -> str:
    if phrase:
        found = resolver.resolve(phrase)
        if isinstance(found, Found):
            return found.key
        raise NeedsAnswer(explain(found, view))
    leaves = view.leaves()
    if len(leaves) == 1:
        return leaves[0]
    raise NeedsAnswer(
        Reply(
            "After which step should the status change? The workflow ends in several steps: "
            + ", ".join(f'"{view.name_of(k)}"' for k in leaves)
            + ". Nothing was changed.",
            asks=True,
        )
    )


def _ask(what: str) -> Reply:
    return Reply(
        f"I understood a status change with preconditions, but not {what}, so I changed "
        'nothing. Say it as "advance the <record> to <status> only when <check> and <check>, '
        'otherwise <status>".',
        asks=True,
    )
