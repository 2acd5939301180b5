"""Requests for step code: "write the code for Check coverage to fetch the Coverage",
"implement Send reminders", "make Fetch patients get /patients", "write code for all
steps". Each becomes one ``call_job_code_agent`` call per step.
"""

from __future__ import annotations

import re

from agents.offline.grammar import oxford
from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.references import Found, Resolver
from agents.offline.view import View

_CODE_WORD = r"(?:job\s+|step\s+|javascript\s+|js\s+|starter\s+)?code"
_VERB = (
    r"(?:write|generate|create|add|implement|update|change|fix|rewrite|redo|draft|fill\s+in|edit"
    r"|modify|improve|complete)"
)
_RULES = [
    re.compile(
        rf"^{_VERB}\s+(?:the\s+|some\s+|starter\s+)?{_CODE_WORD}\s+(?:for|in|of|on|inside)\s+"
        r"(?P<refs>.+?)(?:\s+(?:to|that|so\s+that|so\s+it|which)\s+(?P<what>.+))?$",
        re.I,
    ),
    re.compile(
        rf"^{_VERB}\s+(?P<refs>.+?)(?:'s|s')\s+{_CODE_WORD}(?:\s+(?:to|that|so\s+it)\s+(?P<what>.+))?$",
        re.I,
    ),
    re.compile(
        rf"^{_VERB}\s+(?:the\s+|some\s+)?{_CODE_WORD}\s+(?:to|that|which)\s+(?P<what>.+)$", re.I
    ),
    re.compile(rf"^{_VERB}\s+(?:the\s+)?(?P<missing>missing\s+)?{_CODE_WORD}$", re.I),
    re.compile(r"^(?:implement|code\s+up)\s+(?P<refs>.+)$", re.I),
    re.compile(
        r"^(?:make|have)\s+(?P<refs>.+?)\s+(?P<what>(?:fetch|get|pull|post|send|upload|create"
        r"|transform|map|filter|save|write|read|query|call|push|return|log|convert|parse|upsert"
        r"|insert|email|notify)\b.*)$",
        re.I,
    ),
]
_ALL = re.compile(
    r"^(?:all|every|each)(?:\s+(?:the|of\s+the))?\s+(?:steps?|jobs?)$|^all\s+of\s+them$", re.I
)
_MISSING = re.compile(
    r"^(?:the\s+)?(?:steps?|jobs?)\s+(?:without|with\s+no|missing|that\s+(?:have|lack)\s+no)\s+code$",
    re.I,
)


REWRITE = re.compile(
    r"\b(?:rewrite|re-write|replace|overwrite|redo|regenerate|from\s+scratch|start\s+over)\b", re.I
)


def keeps_existing_code(text: str) -> bool:
    """A request for every step's code that does not say to replace existing code: steps
    that already have code are skipped."""
    if REWRITE.search(text):
        return False
    for rule in _RULES:
        match = rule.match(text)
        refs = match.groupdict().get("refs") if match else None
        if refs and _ALL.match(refs.strip()):
            return True
    return False


def code_request(text: str, view: View, resolver: Resolver) -> Outcome | None:
    for index, rule in enumerate(_RULES):
        match = rule.match(text)
        if not match:
            continue
        groups = match.groupdict()
        refs = groups.get("refs")
        keys: list[str] | None = None
        if refs:
            keys = _keys(refs, groups.get("what"), resolver, view)
            if keys is None and index >= 4:
                continue
            if keys is None:
                resolver.require(refs)
        elif groups.get("missing") is not None and groups.get("missing"):
            keys = [j["key"] for j in view.jobs if not j.get("has_code")]
            if not keys:
                return Reply("Every step already has code. Nothing was changed.")
        elif resolver.current:
            keys = [resolver.current]
        else:
            return Reply(
                "Which step's code should I write? Name it, e.g. \"write the code for "
                f'{view.jobs[0]["name"] if view.jobs else "Fetch patients"} to ...". '
                "Nothing was changed.",
                asks=True,
            )
        if not keys:
            return None
        if keeps_existing_code(text):
            keys = [k for k in keys if not view.by_key[k].get("has_code")]
            if not keys:
                return Reply(
                    'Every step already has code, so I wrote none. Say "rewrite the code for '
                    'all steps" to replace it with starter code. Nothing was changed.'
                )
        calls = [call("call_job_code_agent", job_key=key, message=text) for key in keys]
        names = oxford([f'"{view.name_of(k)}"' for k in keys])
        return Plan(calls, f"Asking the code agent to write the code for {names}.")
    return None


def _keys(refs: str, what: str | None, resolver: Resolver, view: View) -> list[str] | None:
    if what:
        whole = resolver.resolve(f"{refs} to {what}")
        if isinstance(whole, Found):
            return [whole.key]
    if _ALL.match(refs.strip()):
        return [j["key"] for j in view.jobs]
    if _MISSING.match(refs.strip()):
        return [j["key"] for j in view.jobs if not j.get("has_code")]
    result = resolver.resolve(refs)
    if isinstance(result, Found):
        return [result.key]
    parts = [p for p in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", refs) if p.strip()]
    if len(parts) > 1:
        found = [resolver.try_key(p) for p in parts]
        if all(found):
            return [k for k in found if k]
    return None
