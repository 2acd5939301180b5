"""Questions answered from the structure alone; nothing is ever changed.

"what does this workflow do", "list the steps", "what happens after X", "what
happens if X fails", "what runs before X", "which steps use http", "which steps
have code", "what triggers this", "tell me about X", "show me the code of X"
(the one question that needs a read tool), "what adaptors are there".

The answers live here; the patterns that pick them, in order, are rules in
:mod:`agents.offline.rules.questions`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from agents.offline.adaptor_words import resolve_adaptor_word
from agents.offline.grammar import oxford
from agents.offline.plan import Outcome, Plan, Reply, call
from agents.offline.references import Missing, Resolver
from agents.offline.schedule import describe_trigger
from agents.offline.view import EdgeView, View, condition_words
from tools.catalogue.adaptors import load_catalogue
from tools.document.cron import upcoming


class Match:
    """A match whose numbered alternatives (ref2, ref3, ...) read as their base name."""

    def __init__(self, match: re.Match[str]) -> None:
        self._match = match

    def group(self, name: str) -> str:
        for key in (name, *(f"{name}{i}" for i in range(2, 6))):
            value = self._match.groupdict().get(key)
            if value is not None:
                return value
        return ""


Handler = Callable[[Match, View, Resolver], Outcome | None]


def _name(view: View, key: str) -> str:
    return view.label(key)


def _lines(job: dict[str, object]) -> str:
    count = int(str(job.get("code_lines") or 0))
    if not job.get("has_code"):
        return "no code yet"
    return f"{count} line{'s' if count != 1 else ''} of code"


def _code_size(match: Match, view: View, resolver: Resolver) -> Outcome:
    """Counted from the document's body: lines holding code (not blank, not comment-only)."""
    key = resolver.require(match.group("ref"))
    job = view.by_key[key]
    if not job.get("has_code"):
        return Reply(f"{_name(view, key)} has no code yet.")
    return Reply(
        f"{_name(view, key)} has {_lines(job)} (lines of its body that hold code; blank and "
        "comment-only lines are not counted)."
    )


def _arrow(view: View, edge: EdgeView) -> str:
    off = ", disabled" if not edge.enabled else ""
    return f"{_name(view, edge.target)} ({condition_words(edge)}{off})"


def chart(view: View, now: datetime | None) -> str:
    """The workflow as a short chart: trigger, then each step and where it leads. An
    enabled cron trigger's next runs count from ``now``; ``None`` (the time is not known):
    they are left out."""
    if not view.jobs:
        return "The workflow has no steps yet."
    lines = [f'"{view.name or "This workflow"}" has {len(view.jobs)} step(s).']
    for trigger in view.triggers:
        targets = [_name(view, e.target) for e in view.out_edges(trigger["key"])]
        start = f", starting {oxford(targets)}" if targets else ", not connected to a step"
        runs = upcoming(trigger, now=now) if now is not None else ""
        lines.append(f"Trigger: {describe_trigger(trigger)}{start}.{runs}")
    if not view.triggers:
        lines.append("Trigger: none yet.")
    for index, key in enumerate(view.order(), start=1):
        job = view.by_key[key]
        code = _lines(job)
        outs = view.out_edges(key)
        then = "then " + "; ".join(_arrow(view, e) for e in outs) if outs else "ends the run"
        lines.append(f"{index}. {job['name']} [{view.adaptor_of(key)}, {code}] → {then}")
    return "\n".join(lines)


def _list_steps(match: Match, view: View, resolver: Resolver) -> Outcome:
    if not view.jobs:
        return Reply("The workflow has no steps yet.")
    steps = [
        f"{i}. {view.name_of(k)} ({k}, {view.adaptor_of(k)})"
        for i, k in enumerate(view.order(), start=1)
    ]
    return Reply(f"{len(steps)} step(s):\n" + "\n".join(steps))


def _after(match: Match, view: View, resolver: Resolver) -> Outcome:
    key = resolver.require(match.group("ref"))
    outs = view.out_edges(key)
    if not outs:
        return Reply(f"Nothing: {_name(view, key)} is a last step; the run ends there.")
    return Reply(f"After {_name(view, key)}: " + "; ".join(_arrow(view, e) for e in outs) + ".")


def _before(match: Match, view: View, resolver: Resolver) -> Outcome:
    key = resolver.require(match.group("ref"))
    ins = view.in_edges(key)
    if not ins:
        return Reply(f"Nothing leads to {_name(view, key)}: it never runs until it is connected.")
    parts = [f"{_name(view, e.source)} ({condition_words(e)})" for e in ins]
    return Reply(f"{_name(view, key)} runs after " + "; ".join(parts) + ".")


def _outcome(match: Match, view: View, resolver: Resolver) -> Outcome:
    key = resolver.require(match.group("ref"))
    failed = match.group("outcome").lower().startswith(("fail", "error", "break", "crash"))
    wanted = ("on_job_failure", "always") if failed else ("on_job_success", "always")
    edges = [e for e in view.out_edges(key) if e.condition_type in wanted]
    js = [e for e in view.out_edges(key) if e.condition_type == "js_expression"]
    word = "fails" if failed else "succeeds"
    if edges:
        answer = f"If {_name(view, key)} {word}: " + "; ".join(_arrow(view, e) for e in edges)
    elif failed:
        answer = f"If {_name(view, key)} fails, the run stops there: nothing handles its failure"
    else:
        answer = f"If {_name(view, key)} succeeds, nothing runs on success"
    if js:
        answer += ". Depending on the data: " + "; ".join(_arrow(view, e) for e in js)
    return Reply(answer + ".")


def _steps(count: int) -> str:
    return f"{count} step{'s' if count != 1 else ''}"


def _uses(match: Match, view: View, resolver: Resolver) -> Outcome:
    word = match.group("adaptor")
    adaptor = resolve_adaptor_word(word)
    if adaptor is None:
        return Reply(f'I don\'t know an adaptor called "{word}".')
    short = adaptor.split("@")[0]
    keys = [k for k in view.order() if view.adaptor_of(k) == short]
    if not keys:
        return Reply(f"No step uses {short}.")
    names = oxford([_name(view, k) for k in keys])
    if match.group("count"):
        verb = "uses" if len(keys) == 1 else "use"
        return Reply(f"{_steps(len(keys))} of {len(view.jobs)} {verb} {short}: {names}.")
    return Reply(f"Steps using {short}: {names}.")


def _count_edges(match: Match, view: View, resolver: Resolver) -> Outcome:
    """Every connection, counted from the document (disabled ones said as such)."""
    edges = view.edges
    if not edges:
        return Reply("There are no connections yet.")
    disabled = sum(1 for e in edges if not e.enabled)
    total = f"{len(edges)} connection{'s' if len(edges) != 1 else ''}"
    if disabled:
        total += f" ({disabled} disabled)"
    lines = [f"- from {_name(view, e.source)} to {_arrow(view, e)}" for e in edges]
    return Reply(f"{total}:\n" + "\n".join(lines))


def _code_status(match: Match, view: View, resolver: Resolver) -> Outcome:
    without = bool(match.group("no"))
    keys = [k for k in view.order() if bool(view.by_key[k].get("has_code")) != without]
    label = "without code" if without else "with code"
    if not keys:
        return Reply(f"No steps {label}.")
    names = oxford([_name(view, k) for k in keys])
    if match.group("count"):
        return Reply(f"{_steps(len(keys))} of {len(view.jobs)} {label}: {names}.")
    return Reply(f"Steps {label}: {names}.")


def _trigger(match: Match, view: View, resolver: Resolver) -> Outcome:
    if not view.triggers:
        return Reply("It has no trigger yet, so it only runs when started by hand.")
    parts = []
    for trigger in view.triggers:
        targets = [_name(view, e.target) for e in view.out_edges(trigger["key"])]
        start = f", which starts {oxford(targets)}" if targets else ", not connected to a step"
        parts.append(f"{describe_trigger(trigger)}{start}")
    return Reply("It is triggered by " + "; ".join(parts) + ".")


def _about(match: Match, view: View, resolver: Resolver) -> Outcome | None:
    result = resolver.resolve(match.group("ref"))
    if isinstance(result, Missing) and not result.suggestions:
        return None
    key = resolver.require(match.group("ref"))
    job = view.by_key[key]
    code = _lines(job)
    ins = [f"{_name(view, e.source)} ({condition_words(e)})" for e in view.in_edges(key)]
    outs = [_arrow(view, e) for e in view.out_edges(key)]
    text = f"{_name(view, key)} (key {key}) uses {view.adaptor_of(key)} and has {code}."
    text += f" It runs after {'; '.join(ins)}." if ins else " Nothing leads to it."
    text += f" Then: {'; '.join(outs)}." if outs else " It ends the run."
    if job.get("has_code"):
        text += f' Ask "show me the code of {view.name_of(key)}" to read it.'
    return Reply(text)


def _show_code(match: Match, view: View, resolver: Resolver) -> Outcome:
    key = resolver.require(match.group("ref"))
    return Plan([call("inspect_job_code", job_keys=[key])], "Reading the code.")


def _adaptors(match: Match, view: View, resolver: Resolver) -> Outcome:
    names = sorted(a.short_name for a in load_catalogue().adaptors.values())
    return Reply("Adaptors I can use: " + ", ".join(names) + ".")


def _functions(match: Match, view: View, resolver: Resolver) -> Outcome:
    adaptor = load_catalogue().get(resolve_adaptor_word(match.group("adaptor")) or "")
    if adaptor is None:
        return Reply(f'I don\'t know an adaptor called "{match.group("adaptor")}".')
    functions = ", ".join(f.signature for f in adaptor.functions)
    return Reply(f"{adaptor.short_name} ({adaptor.description}) offers: {functions}.")


def _docs(match: Match, view: View, resolver: Resolver) -> Outcome:
    query = match.group("query").strip(" ?")
    return Plan([call("search_documentation", query=query)], "Searching the documentation.")


def question_body(text: str) -> str:
    """The question itself: "tell me what ...?" -> "what ..."."""
    body = re.sub(
        r"^(?:tell\s+me|can\s+you\s+tell\s+me|do\s+you\s+know)\s+(?=what|which|how|when|where)",
        "",
        text.strip().rstrip("?").strip(),
        flags=re.I,
    )
    return re.sub(r"^(?:so|and|ok|okay|hey),?\s+", "", body, flags=re.I)
