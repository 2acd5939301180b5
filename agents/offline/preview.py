""" "What happens if I remove X?": one ``preview_change`` call, answered from its result.

The question is read as a change the user is thinking of: removing steps ("what if I
delete X", "what would break if X were removed", "what does removing X do", "is it
safe to remove X", "what depends on X"), or removing or disabling a connection ("what
happens if I disconnect A from B", "... if the edge from A to B is disabled"). Steps
are named like everywhere else (an ambiguous name asks which). The change is tried by
the ``preview_change`` tool on a copy, never made; the answer repeats the tool's
impact sentences (:mod:`tools.document.impact`), so it is exact and names only what
would change.
"""

from __future__ import annotations

import re

from agents.offline.connections import connect, disconnect
from agents.offline.edits import resolve_many
from agents.offline.plan import Call, Outcome, Plan, Reply, call
from agents.offline.references import Resolver, is_vague
from agents.offline.view import View
from tools.registry import spec_for

_REMOVE_VERBS = (
    r"remove|removed|removing|delete|deleted|deleting|drop|dropped|dropping|get\s+rid\s+of"
    r"|got\s+rid\s+of|getting\s+rid\s+of|take\s+out|took\s+out|taking\s+out|cut|cutting"
    r"|ditch|ditched|ditching|scrap|scrapped|scrapping|kill|killed|killing|erase|erased"
    r"|erasing|lose|lost|losing|eliminate|eliminated|eliminating|skip(?:ped)?\s+over"
)
_UNLINK_VERBS = r"disconnect|disconnected|disconnecting|unlink|unlinked|unlinking"
_DISABLE_VERBS = (
    r"disable|disabled|disabling|turn\s+off|turned\s+off|turning\s+off|deactivate|deactivated"
    r"|deactivating|switch\s+off|switched\s+off|switching\s+off"
)
_VERB = rf"(?P<verb>{_REMOVE_VERBS}|{_UNLINK_VERBS}|{_DISABLE_VERBS})"
_WHO = r"(?:i|we|you|they|someone|somebody|anyone|the\s+user)"
_MODAL = (
    r"(?:(?:were|was)\s+to\s+|(?:did|do|does|should|would|will|could|can|might)\s+(?:just\s+)?"
    r"|decided?\s+to\s+|want(?:ed)?\s+to\s+|just\s+|went\s+ahead\s+and\s+)?"
)
_PASSIVE = (
    r"(?:is|was|were|are|got|gets|get|had\s+been|has\s+been|have\s+been|would\s+be|will\s+be"
    r"|were\s+to\s+be|was\s+to\s+be|became|went)\s+"
    r"(?P<pverb>removed|deleted|dropped|taken\s+out|cut|ditched|scrapped|killed|erased|gone"
    r"|eliminated|missing|disconnected|unlinked|disabled|turned\s+off|deactivated"
    r"|switched\s+off|away)"
)
# The change the user is thinking of, after "if" / "when" (or on its own).
_CONDITIONS = (
    re.compile(rf"^{_WHO}\s+{_MODAL}{_VERB}\s+(?P<ref>.+)$", re.I),
    re.compile(
        rf"^(?P<ref>.+?)\s+{_PASSIVE}(?:\s+from\s+(?:the|this)\s+(?:workflow|flow))?$", re.I
    ),
    re.compile(
        r"^there\s+(?:is|was|were)\s+no\s+(?P<ref>.+?)(?:\s+(?:step|any\s+more|anymore))?$", re.I
    ),
    re.compile(rf"^{_WHO}\s+(?:didn'?t|did\s+not|don'?t|do\s+not)\s+have\s+(?P<ref>.+)$", re.I),
    re.compile(r"^(?P<ref>.+?)\s+(?:didn'?t|did\s+not|doesn'?t|does\s+not)\s+exist$", re.I),
)
_QUESTIONS = (
    # what happens / what would break / which steps stop ... if <change>; what if <change>
    re.compile(
        r"^(?:what|which(?:\s+steps?|\s+parts?)?|who|how\s+much)\b[\w\s',-]{0,60}?\s+"
        r"(?:if|when|once|after|should)\s+(?P<cond>.+)$"
        r"|^what\s+if\s+(?P<cond2>.+)$",
        re.I,
    ),
    # if I remove X, what happens / suppose we drop X: which steps stop?
    re.compile(
        r"^(?:if|when|once|suppose|say|imagine|assume)\s+(?P<cond3>.+?)\s*[,;:]?\s+"
        r"(?:then\s+)?(?:what|which(?:\s+steps?|\s+parts?)?)(?:\s+\w+){0,3}?\s+"
        r"(?:happens?|breaks?|stops?|changes?|fails?|runs?|(?:is|are|gets?)\s+affected)$",
        re.I,
    ),
    # what does removing X do / what's the impact of deleting X / how would dropping X affect it
    re.compile(
        r"^(?:what(?:'s|\s+is|\s+are|\s+would\s+be|\s+will\s+be)\s+(?:the\s+)?(?:impact|effects?"
        r"|consequences?|result|fallout|risk)\s+of|what\s+(?:does|would|will|could)|how\s+(?:does"
        r"|would|will))\s+(?P<gerund>removing|deleting|dropping|taking\s+out|getting\s+rid\s+of"
        r"|cutting|ditching|scrapping|killing|erasing|losing|eliminating|disconnecting|unlinking"
        r"|disabling|turning\s+off|deactivating)\s+(?P<ref>.+?)(?:\s+(?:do|break|change|affect"
        r"|mean|cause|impact|stop|involve)\b.*)?$",
        re.I,
    ),
    # what happens without X
    re.compile(
        r"^what\s+(?:happens|would\s+happen|will\s+happen|breaks|would\s+break|runs|would\s+run"
        r"|changes|would\s+change)\s+without\s+(?P<ref>.+)$",
        re.I,
    ),
    # is it safe to remove X / can I safely delete X / can I remove X safely
    re.compile(
        r"^(?:is\s+it|would\s+it\s+be|it'?s)\s+(?:safe|ok(?:ay)?|fine|alright)\s+to\s+"
        rf"{_VERB}\s+(?P<ref>.+?)$"
        rf"|^(?:can|could|may)\s+{_WHO}\s+safely\s+(?P<verb2>{_REMOVE_VERBS}|{_UNLINK_VERBS})\s+"
        r"(?P<ref2>.+)$"
        rf"|^(?:can|could|may)\s+{_WHO}\s+(?P<verb3>{_REMOVE_VERBS}|{_UNLINK_VERBS})\s+"
        r"(?P<ref3>.+?)\s+safely$",
        re.I,
    ),
    # what depends on X / which steps rely on X
    re.compile(
        r"^(?:what|which\s+steps?|who)\s+(?:depends?|relies|rely|hangs?|hinges?)\s+on\s+"
        r"(?P<dref>.+)$",
        re.I,
    ),
)
_EDGE_WORDS = re.compile(
    r"^(?:the\s+)?(?:edge|link|connection|path|arrow|line)s?\s+(?:from\s+|between\s+)?(?P<body>.+)$",
    re.I,
)
_TRIGGER = re.compile(r"^(?:the\s+)?(?:trigger|schedule|cron|webhook|timer)\b", re.I)
_UNLINK = re.compile(rf"^(?:{_UNLINK_VERBS})$", re.I)
_DISABLE = re.compile(rf"^(?:{_DISABLE_VERBS})$", re.I)
_PASSIVE_UNLINK = re.compile(r"^(?:disconnected|unlinked)$", re.I)
_PASSIVE_DISABLE = re.compile(r"^(?:disabled|turned\s+off|deactivated|switched\s+off)$", re.I)


def preview(text: str, view: View, resolver: Resolver) -> Outcome | None:
    """A ``preview_change`` plan for a "what happens if ..." question, or None."""
    for pattern in _QUESTIONS:
        match = pattern.match(text)
        if match is None:
            continue
        groups = {k: v for k, v in match.groupdict().items() if v is not None}
        cond = groups.get("cond") or groups.get("cond2") or groups.get("cond3")
        if cond is not None:
            outcome = _condition(cond, view, resolver)
        elif "gerund" in groups:
            outcome = _change(groups["gerund"], groups["ref"], view, resolver)
        elif "dref" in groups:
            outcome = _change("remove", groups["dref"], view, resolver)
        else:
            verb = groups.get("verb") or groups.get("verb2") or groups.get("verb3") or "remove"
            ref = groups.get("ref") or groups.get("ref2") or groups.get("ref3") or ""
            outcome = _change(verb, ref, view, resolver)
        if outcome is not None:
            return outcome
    return None


def _condition(text: str, view: View, resolver: Resolver) -> Outcome | None:
    clause = text.strip().rstrip("?. ")
    for pattern in _CONDITIONS:
        match = pattern.match(clause)
        if match is None:
            continue
        groups = match.groupdict()
        verb = groups.get("verb") or ""
        passive = groups.get("pverb") or ""
        if passive:
            verb = (
                "disconnect"
                if _PASSIVE_UNLINK.match(passive)
                else "disable"
                if _PASSIVE_DISABLE.match(passive)
                else "remove"
            )
        return _change(verb or "remove", match.group("ref"), view, resolver)
    return None


def _change(verb: str, ref: str, view: View, resolver: Resolver) -> Outcome | None:
    """The preview of one change: ``verb`` (remove, disconnect, disable) applied to ``ref``."""
    ref = re.sub(
        r"\s+(?:from|in|out\s+of)\s+(?:the|this|our|my)\s+(?:workflow|flow)$", "", ref.strip()
    )
    ref = ref.strip().rstrip("?. ")
    if not ref:
        return None
    edge = _EDGE_WORDS.match(ref)
    if _UNLINK.match(verb) or (edge and not _DISABLE.match(verb)):
        planned = disconnect(f"disconnect {edge.group('body') if edge else ref}", view, resolver)
        return _preview_of(planned, view)
    if _DISABLE.match(verb):
        if not edge:
            return None  # a step or trigger cannot be disabled like an edge
        return _preview_of(
            connect(f"disable the edge from {edge.group('body')}", view, resolver), view
        )
    if _TRIGGER.match(ref):
        return Reply(
            'A trigger can\'t be removed here, only replaced ("use a webhook") or disabled '
            '("disable the trigger"), so there is no removal to preview. Nothing was changed.'
        )
    named = re.sub(r"\s+(?:steps?|jobs?)$", "", ref, flags=re.I)
    body = ref if is_vague(named) else named
    keys = resolve_many(body, resolver)
    names = ", ".join(f'"{view.name_of(k)}"' for k in keys)
    plan = [call("preview_change", tool="remove_jobs", input={"keys": keys})]
    return Plan(plan, f"Working out what removing {names} would change.")


def _preview_of(planned: Outcome | None, view: View) -> Outcome | None:
    """The one edit a parsed command plans, previewed instead of made."""
    if planned is None or isinstance(planned, Reply):
        return planned
    edits = [c for c in planned.calls if _structural(c)]
    if len(edits) != 1 or len(planned.calls) != 1:
        return Reply(
            "Offline I can only preview one change at a time, and that one takes several "
            "edits. Nothing was changed."
        )
    edit = edits[0]
    return Plan(
        [call("preview_change", tool=edit.name, input=edit.input)],
        "Working out what that change would do.",
    )


def _structural(planned: Call) -> bool:
    spec = spec_for(planned.name)
    return spec is not None and spec.structural
