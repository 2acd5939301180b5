"""A rule change to a built workflow: "any <A> with <B> also needs <C>".

Seed 000's Aetna change: "any ortho referral with a plan code starting with `PPO-`
also needs prior auth, not just the HMO plans". <C> is a step the workflow already
has ("prior auth" -> Submit prior-auth request); the referrals <A> with <B> must
now reach it too. That is one rule: a new arm of the decision that leads to <C>
(the nearest step upstream of <C> whose edges branch on a condition), or, when that
decision already sends some cases straight to <C>, its condition widened with
``|| (…)``. Either way the edge is behind the success guard and nothing else in the
workflow changes.

What <A> and <B> say becomes the condition: "ortho referral" is the referral's type
(``referralType === 'ortho'``) unless the word is already a value the workflow's
conditions test ("Aetna" in ``insurance === 'Aetna'``); "a plan code starting with
PPO-" is ``planCode?.startsWith('PPO-')``. A step that does not exist yet, no
decision upstream of it, or two decisions as near are asked about, never guessed.
"""

from __future__ import annotations

import re

from agents.offline.conditions import parse_condition, require_clear
from agents.offline.grammar import unquote
from agents.offline.plan import Outcome, Plan, Reply, call, edge_args
from agents.offline.references import Found, Resolver
from agents.offline.view import EdgeView, View
from tools.document.conditions import on_success_and, unguarded

PATTERN = re.compile(
    r"^(?:(?:so|now|and|oh|ok|okay)[\s,]+)*(?P<any>(?:any|every|all)\s+)?(?P<who>[\w' -]+?)\s+"
    r"(?:with|that\s+ha(?:ve|s)|having)\s+(?P<with>.+?)\s+(?P<also>also\s+|now\s+|too\s+)*"
    r"(?:needs?|requires?|must\s+(?:get|have|go\s+through)|ha(?:ve|s)\s+to\s+(?:get|go\s+"
    r"through))\s+(?P<also2>also\s+)?(?P<need>.+?)"
    r"(?:\s*,?\s*(?:not\s+(?:just|only)|too|as\s+well|in\s+addition)\b.*)?[.!]?$",
    re.I | re.S,
)
_OPS = (
    (r"starting|beginning", "starts with"),
    (r"ending", "ends with"),
    (r"containing|including", "contains"),
    (r"over|above|more\s+than|greater\s+than", "is over"),
    (r"under|below|less\s+than", "is under"),
    (r"at\s+least", "is at least"),
    (r"at\s+most", "is at most"),
    (r"of|equal\s+to|set\s+to", "is"),
)
_PART = re.compile(
    r"^(?:an?\s+|the\s+)?(?P<field>.+?)\s+(?P<op>"
    + "|".join(f"(?:{words})" for words, _ in _OPS)
    + r")(?:\s+with)?\s+(?P<value>.+)$",
    re.I,
)
_VALUE = re.compile(r"state\.data\.(?P<field>[\w$]+)\s*===\s*'(?P<value>[^']+)'")


def change(text: str, view: View, resolver: Resolver) -> Outcome | None:
    match = PATTERN.match(text.strip())
    if match is None or not (match.group("any") or match.group("also") or match.group("also2")):
        return None
    need = unquote(re.sub(r"^(?:an?|the)\s+", "", match.group("need").strip(), flags=re.I))
    phrases, read_as = _who(match.group("who"), view)
    for part in re.split(r"\s+and\s+", match.group("with").strip(), flags=re.I):
        phrases.append(_with(part))
    condition = require_clear(parse_condition(" and ".join(phrases)))
    if condition is None or condition.type != "js_expression" or condition.expression is None:
        return _refuse(f'"{match.group("who")} with {match.group("with")}"')
    found = resolver.resolve(need)
    if not isinstance(found, Found):
        return Reply(
            f"I understood that {match.group('who')} with {match.group('with')} "
            f'({condition.words()}) also need "{need}", but no step of the workflow does '
            f'"{need}" by that name, so I changed nothing. Name the step that does it, or add '
            "it first.",
            asks=True,
        )
    target = found.key
    sources = _nearest_decisions(target, view)
    if len(sources) != 1:
        named = " or ".join(f'"{view.name_of(s)}"' for s in sources)
        where = f"from {named}" if sources else "from which step"
        return Reply(
            f"I understood that {condition.words()} the run must also reach "
            f'"{view.name_of(target)}", but not {where} it should branch, so I changed nothing. '
            f'Say "also run {view.name_of(target)} after <step> when …".',
            asks=True,
        )
    source = sources[0]
    name, step = view.name_of(source), view.name_of(target)
    existing = view.edge(source, target)
    if existing is None:
        args = condition.args()
        edge = edge_args(
            source, target, "js_expression", args["condition_expression"], condition.label
        )
        return Plan(
            [call("add_edges", edges=[edge])],
            f'One new branch: "{name}" → "{step}" {condition.words()} (only when "{name}" '
            f"succeeded), edge {source}->{target}{read_as}; every other step and edge is "
            "unchanged." + _twice(source, target, view),
        )
    return _widen(existing, condition.expression, condition.label, view, read_as)


def _widen(edge: EdgeView, check: str, label: str | None, view: View, read_as: str) -> Outcome:
    """The decision already sends some cases straight to the step: its rule gets an ``or``."""
    name, step = view.name_of(edge.source), view.name_of(edge.target)
    old = unguarded(edge.expression or "") if edge.condition_type == "js_expression" else None
    if old is None:
        return Reply(
            f'"{name}" already goes to "{step}" ({edge.condition_type.replace("_", " ")}), so '
            "that rule would change nothing; I changed nothing.",
            asks=True,
        )
    labels = [part for part in (edge.label, label) if part]
    update = {
        "source": edge.source,
        "target": edge.target,
        "condition_type": "js_expression",
        "condition_expression": on_success_and(f"({old}) || ({check})"),
        "condition_label": " or ".join(labels) if labels else None,
    }
    return Plan(
        [call("update_edges", edges=[{k: v for k, v in update.items() if v is not None}])],
        f'One rule changed: edge {edge.source}->{edge.target} ("{name}" → "{step}") now also '
        f'runs when {label or check} (still only when "{name}" succeeded){read_as}; every '
        "other step and edge is unchanged.",
    )


def _twice(source: str, target: str, view: View) -> str:
    """A note when a case that takes the new branch and another arm of ``source`` reaches a
    later step along both (OpenFn runs a step once per edge that reaches it)."""
    after = _downstream([e.target for e in view.out_edges(target)], view)
    others = [e.target for e in view.out_edges(source) if e.target != target]
    shared = [k for k in view.order() if k in after and k in _downstream(others, view)]
    if not shared:
        return ""
    return (
        f' Note: a case that also takes another branch of "{view.name_of(source)}" runs '
        f'"{view.name_of(shared[0])}" once per branch that reaches it.'
    )


def _downstream(starts: list[str], view: View) -> set[str]:
    seen: set[str] = set()
    queue = list(starts)
    while queue:
        key = queue.pop()
        if key not in seen:
            seen.add(key)
            queue += [e.target for e in view.out_edges(key)]
    return seen


def _who(words: str, view: View) -> tuple[list[str], str]:
    """ "ortho referral" -> ["the referral type is ortho"]; a word that is already a value the
    workflow's conditions test ("Aetna") is a condition on that field."""
    tokens = words.strip().split()
    if not tokens:
        return [], ""
    noun = re.sub(r"s$", "", tokens[-1].lower()) if len(tokens[-1]) > 3 else tokens[-1].lower()
    known = {
        m.group("value").lower(): (m.group("field"), m.group("value"))
        for e in view.edges
        for m in _VALUE.finditer(e.expression or "")
    }
    phrases, kind = [], []
    for token in tokens[:-1]:
        if token.lower() in known:
            field, value = known[token.lower()]
            spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", field).lower()
            phrases.append(f"the {spaced} is {value}")
        else:
            kind.append(token)
    said = ""
    if kind:
        phrases.append(f"the {noun} type is {' '.join(kind)}")
        said = f' (I read "{words.strip()}" as: the {noun} type is {" ".join(kind)})'
    return phrases, said


def _with(part: str) -> str:
    """ "a plan code starting with PPO-" -> "the plan code starts with PPO-"; "a copay
    exception" -> "the copay exception is present"."""
    part = part.strip()
    found = _PART.match(part)
    if found is None:
        flag = re.sub(r"^(?:an?|the)\s+", "", part, flags=re.I)
        return f"the {flag} is present"
    op = next(said for words, said in _OPS if re.fullmatch(words, found.group("op"), flags=re.I))
    return f"the {found.group('field')} {op} {found.group('value')}"


def _nearest_decisions(target: str, view: View) -> list[str]:
    """The steps nearest upstream of ``target`` whose edges branch on a condition."""
    seen = {target}
    level = [target]
    while level:
        parents = [e.source for key in level for e in view.in_edges(key) if e.source in view.by_key]
        parents = [p for p in dict.fromkeys(parents) if p not in seen]
        decisions = [
            p
            for p in parents
            if any(e.condition_type == "js_expression" and e.enabled for e in view.out_edges(p))
        ]
        if decisions:
            return decisions
        seen.update(parents)
        level = parents
    return []


def _refuse(part: str) -> Reply:
    return Reply(
        f"I understood that a rule changes, but not {part}, so I changed nothing. Say it as "
        '"any <kind> <thing> with <field> <comparison> <value> also needs <step>", e.g. "any '
        'ortho referral with a plan code starting with PPO- also needs prior auth".',
        asks=True,
    )
