"""The final answer of a planner turn, written from the tool calls and their results.

Stateless: everything comes from the conversation (the assistant's tool_use
blocks, the matching tool_result blocks), the updated structure and the request's
time (a created workflow's cron trigger says its next runs).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from agents.offline.code_requests import keeps_existing_code
from agents.offline.grammar import oxford
from agents.offline.questions import chart
from agents.offline.schedule import describe_trigger
from agents.offline.view import EdgeView, View, condition_words, document_from
from tools.base import ToolSpec
from tools.document.names import sanitise_name
from tools.document.reach import reachable_jobs
from tools.document.redaction import CHANGES_HEADING
from tools.edits import (
    add_edges,
    add_jobs,
    add_review_gate,
    add_rule_table,
    add_status_transition,
    attach_credential,
    call_job_code_agent,
    create_workflow,
    inspect_job_code,
    offer_plan_mode,
    preview_change,
    remove_edges,
    remove_jobs,
    search_documentation,
    set_trigger,
    test_run,
    update_edges,
    update_jobs,
    update_workflow,
)
from tools.registry import MUTATING_TOOLS, spec_for

_STRUCTURE = f"\n\n{CHANGES_HEADING}"
_GRAPH_NOTE = re.compile(
    r"Step '[^']*' is not reached from any trigger \([^)]*\), so it never runs\.\s*"
    r"|Trigger '[^']*' is not connected to a step yet\.\s*"
)
_SAVED_TRIGGER = re.compile(r"trigger \S+: (?:webhook|cron '(?P<cron>[^']*)'), (?P<state>\w+)")


def _q(view: View, key: str) -> str:
    return view.label(key)


def _edge_words(spec: dict[str, Any]) -> str:
    edge = EdgeView(
        spec["source"],
        spec["target"],
        spec.get("condition_type") or "on_job_success",
        spec.get("condition_expression"),
        spec.get("condition_label"),
    )
    return condition_words(edge)


Sentences = Callable[[dict[str, Any], str, View], list[str]]


def _create_workflow(args: dict[str, Any], view: View, now: datetime | None) -> list[str]:
    """The one call whose sentences tell the time: the chart's next runs count from ``now``."""
    text = f'Created the workflow "{view.name or args.get("name")}":\n{chart(view, now)}'
    if view.name == "New workflow":
        text += '\nRename it with "rename the workflow to ...".'
    return [text]


def _update_workflow(args: dict[str, Any], result: str, view: View) -> list[str]:
    saved = re.search(r"Renamed the workflow to '([^']*)'", result)
    return [f'Renamed the workflow to "{saved.group(1) if saved else view.name}".']


def _add_jobs(args: dict[str, Any], result: str, view: View) -> list[str]:
    return [
        f'Added the step "{sanitise_name(job["name"])}" ({str(job["adaptor"]).split("@")[0]}).'
        for job in args.get("jobs", [])
    ]


def _update_jobs(args: dict[str, Any], result: str, view: View) -> list[str]:
    lines = []
    for job in args.get("jobs", []):
        key = job.get("new_key") or job["key"]
        if job.get("name"):
            saved = re.search(rf"\b{re.escape(job['key'])}: name -> '([^']*)'", result)
            new_name = saved.group(1) if saved else sanitise_name(job["name"])
            lines.append(f'Renamed step {job["key"]} to "{new_name}".')
        if job.get("adaptor"):
            lines.append(f"{_q(view, key)} now uses {str(job['adaptor']).split('@')[0]}.")
        if job.get("new_key"):
            lines.append(f'Changed the key of {_q(view, key)} to "{key}".')
    return lines


def _attach_credential(args: dict[str, Any], result: str, view: View) -> list[str]:
    return [result.split("\n", 1)[0]]  # the notes after it are said with the others


def _remove_jobs(args: dict[str, Any], result: str, view: View) -> list[str]:
    said = result.split("\nNote: ", 1)[0]  # the notes are said after everything done
    sentences = [s for s in said.split(". ") if not s.startswith("Also removed")]
    text = ". ".join(sentences).rstrip(".") + "."
    if "held code" in result:
        text += " You can get the code back by reverting to an earlier version."
    if not view.jobs:
        text += (
            ' The workflow is empty now: tell me what it should do, e.g. "create a '
            'workflow that fetches patients from dhis2 and upserts them to postgres".'
        )
    return [text]


def _add_edges(args: dict[str, Any], result: str, view: View) -> list[str]:
    return [
        f"Connected {_q(view, e['source'])} → {_q(view, e['target'])} ({_edge_words(e)})."
        for e in args.get("edges", [])
    ]


def _remove_edges(args: dict[str, Any], result: str, view: View) -> list[str]:
    return [
        f"Disconnected {_q(view, e['source'])} → {_q(view, e['target'])}."
        for e in args.get("edges", [])
    ]


def _update_edges(args: dict[str, Any], result: str, view: View) -> list[str]:
    return [_edge_update(e, view) for e in args.get("edges", [])]


def _set_trigger(args: dict[str, Any], result: str, view: View) -> list[str]:
    return [_trigger_words(args, result, view)]


def _call_job_code_agent(args: dict[str, Any], result: str, view: View) -> list[str]:
    label = _q(view, args.get("job_key", ""))
    operations = ", ".join(dict.fromkeys(re.findall(r"\b[\w$.]+\(\.\.\.\)", result)))
    count = re.search(r"Wrote (\d+) lines?", result)
    if count and operations:
        return [f"Wrote starter code for {label} ({count.group(1)} lines: {operations})."]
    return [f"Wrote the code for {label}."]


def _inspect_job_code(args: dict[str, Any], result: str, view: View) -> list[str]:
    return [f"```\n{result}\n```"]


def _search_documentation(args: dict[str, Any], result: str, view: View) -> list[str]:
    entries = result.split("\n\n")[:3]
    return ["From the documentation:\n" + "\n\n".join(entries)]


def _test_run(args: dict[str, Any], result: str, view: View) -> list[str]:
    # The graph returns the run's own summary as the result: said as it is.
    return [result]


def _preview_change(args: dict[str, Any], result: str, view: View) -> list[str]:
    """The tool's impact sentences, as it wrote them, after what the change is."""
    tool = str(args.get("tool", ""))
    found = result.removeprefix(preview_change.LEAD)
    found = found.split(preview_change.REPORT.format(tool=tool), 1)[0].strip()
    given = args.get("input") if isinstance(args.get("input"), dict) else {}
    assert isinstance(given, dict)
    keys = [k for k in given.get("keys") or [] if isinstance(k, str)]
    edges = [e for e in given.get("edges") or [] if isinstance(e, dict)]
    if keys:
        what = "If you removed " + oxford([_q(view, k) for k in keys])
    elif edges:
        pairs = oxford(
            [f"{_q(view, e.get('source', ''))} → {_q(view, e.get('target', ''))}" for e in edges]
        )
        what = (
            "If you disabled "
            if any(e.get("enabled") is False for e in edges)
            else "If you removed "
        ) + (f"the connection {pairs}")
    else:
        what = "If you made that change"
    return [f"{what}: {found} Nothing was changed."]


def _as_said(args: dict[str, Any], result: str, view: View) -> list[str]:
    # Tools that write code from a template say what they built in plain words themselves.
    return [result.split("\nNote:", 1)[0]]


# What each tool's successful call says, keyed by the tool's spec (never by its name);
# create_workflow's, which tells the time, is said by describe_call itself.
_SENTENCES: dict[ToolSpec[Any], Sentences] = {
    update_workflow.TOOL: _update_workflow,
    add_jobs.TOOL: _add_jobs,
    update_jobs.TOOL: _update_jobs,
    attach_credential.TOOL: _attach_credential,
    remove_jobs.TOOL: _remove_jobs,
    add_edges.TOOL: _add_edges,
    remove_edges.TOOL: _remove_edges,
    update_edges.TOOL: _update_edges,
    set_trigger.TOOL: _set_trigger,
    call_job_code_agent.TOOL: _call_job_code_agent,
    inspect_job_code.TOOL: _inspect_job_code,
    search_documentation.TOOL: _search_documentation,
    test_run.TOOL: _test_run,
    preview_change.TOOL: _preview_change,
    offer_plan_mode.TOOL: lambda args, result, view: [result],
    add_review_gate.TOOL: _as_said,
    add_status_transition.TOOL: _as_said,
    add_rule_table.TOOL: _as_said,
}


def describe_call(
    name: str, args: dict[str, Any], result: str, view: View, now: datetime | None
) -> list[str]:
    """Plain sentences for one successful call, made at ``now``."""
    spec = spec_for(name)
    if spec is create_workflow.TOOL:
        return _create_workflow(args, view, now)
    sentences = _SENTENCES.get(spec) if spec is not None else None
    if sentences is not None:
        return sentences(args, result, view)
    return [f"Done: {spec.action if spec else name}."]


def _trigger_words(args: dict[str, Any], result: str, view: View) -> str:
    """One set_trigger call, from what it asked and what the tool saved (not from the final
    structure: a turn may set the trigger twice)."""
    if set(args) == {"type", "key", "enabled"}:
        return f"{'Enabled' if args['enabled'] else 'Disabled'} the trigger."
    saved = _SAVED_TRIGGER.search(result)
    current = view.trigger() or {}
    trigger = {
        "type": args.get("type") or current.get("type"),
        "cron_expression": args.get("cron_expression")
        or (saved.group("cron") if saved else current.get("cron_expression")),
        "enabled": saved.group("state") == "enabled" if saved else current.get("enabled"),
    }
    text = f"The trigger is now {describe_trigger(trigger)}."
    if not trigger["enabled"] and "enabled" not in args:
        text += ' Say "enable the trigger" to turn it on.'
    return text


def _edge_update(item: dict[str, Any], view: View) -> str:
    source, target = item["source"], item["target"]
    if item.get("new_target"):
        return (
            f"{_q(view, source)} now leads to {_q(view, item['new_target'])} instead of "
            f"{_q(view, target)}."
        )
    if item.get("new_source"):
        return (
            f"{_q(view, target)} now follows {_q(view, item['new_source'])} instead of "
            f"{_q(view, source)}."
        )
    parts = []
    if "enabled" in item and len(item) == 3:
        state = "Enabled" if item["enabled"] else "Disabled"
        return f"{state} the edge {_q(view, source)} → {_q(view, target)}."
    edge = view.edge(source, target)
    if edge is not None:
        parts.append(f"now runs {condition_words(edge)}")
    return f"{_q(view, source)} → {_q(view, target)} " + (", ".join(parts) or "updated") + "."


def final_text(
    rounds: list[list[tuple[str, dict[str, Any], str, bool]]], view: View, now: datetime | None
) -> str:
    """``rounds``: per round, (tool name, input, result text, is_error) in call order;
    ``now``: when the request was made (``RequestContext.now``)."""
    done: list[str] = []
    errors: list[str] = []
    notes: list[str] = []
    changed = False
    for calls in rounds:
        for name, args, result, is_error in calls:
            result = result.split(_STRUCTURE, 1)[0].strip()
            if is_error:
                errors.append(_error_text(name, args, result, view))
                continue
            done += describe_call(name, args, result, view, now)
            changed = changed or name in MUTATING_TOOLS
            for line in result.split("\n"):
                # Reachability is said once, from the final graph (below): a call's own note
                # is about the graph between two calls of one change.
                note = _GRAPH_NOTE.sub("", line.removeprefix("Note: ")).strip()
                if line.startswith("Note: ") and note and f"Note: {note}" not in notes:
                    notes.append(f"Note: {note}")
    if changed:
        notes += reach_notes(view)
    notes += _code_notes(rounds, view)
    done = list(dict.fromkeys(done))
    if errors:
        text = " ".join(dict.fromkeys(errors))
        if done:
            text = "I couldn't do all of that. " + text
            text += "\nWhat did change:\n" + "\n".join(f"- {line}" for line in done)
        elif not re.search(r"(?:was|were) not changed|nothing was changed", text, re.I):
            text += " Nothing was changed."
        return text
    if not done:
        return "Nothing needed to change." + ("\n" + "\n".join(notes) if notes else "")
    body = done[0] if len(done) == 1 else "\n".join(f"- {line}" for line in done)
    return body + ("\n" + "\n".join(notes) if notes else "")


def reach_notes(view: View) -> list[str]:
    """What the workflow's graph, as it is now, says about steps that never run (from
    :func:`tools.document.reach.reachable_jobs`): one note, never one per step. A trigger
    whose connections are all disabled is said once (no step runs), not as every step."""
    if not view.jobs or not view.triggers:
        return []
    structure = document_from(view.raw).structure
    notes = []
    started = False
    for key in structure.triggers:
        edges = [e for e in structure.edges_from(key) if e.target_job in structure.jobs]
        if not edges:
            notes.append(f"Note: {view.label(key)} is not connected to a step yet.")
        elif not any(e.enabled for e in edges):
            targets = oxford([_q(view, e.target_job) for e in edges])
            notes.append(
                f"Note: the connection from {view.label(key)} to {targets} is disabled, so no "
                "step runs until it is enabled."
            )
        else:
            started = True
    if not started:
        return notes
    reached = reachable_jobs(structure)
    stranded = [k for k in view.order() if k not in reached]
    if not stranded:
        return notes
    behind = reachable_jobs(structure, with_disabled=True)
    names = oxford([_q(view, k) for k in stranded])
    they = "it never runs" if len(stranded) == 1 else "they never run"
    disabled = [k for k in stranded if k in behind]
    why = ""
    if disabled:
        only = oxford([_q(view, k) for k in disabled])
        why = f" (only a disabled connection leads to {only})"
    verb = "is" if len(stranded) == 1 else "are"
    notes.append(f"Note: {names} {verb} not reached from the trigger{why}, so {they}.")
    return notes


def _code_notes(rounds: list[list[tuple[str, dict[str, Any], str, bool]]], view: View) -> list[str]:
    """Steps a "write code for all steps" left alone because they already had code."""
    asked = [
        args
        for calls in rounds
        for name, args, _, _ in calls
        if _fans_out(name) and keeps_existing_code(str(args.get("message", "")))
    ]
    if not asked:
        return []
    called = {args.get("job_key") for args in asked}
    skipped = [j for j in view.jobs if j["key"] not in called and j.get("has_code")]
    if not skipped:
        return []
    names = oxford([f'"{j["name"]}"' for j in skipped])
    have = "it already has" if len(skipped) == 1 else "they already have"
    return [
        f'Skipped {names}: {have} code, which I left as it was. Say "rewrite the code for '
        'all steps" to replace it with starter code.'
    ]


def _error_text(name: str, args: dict[str, Any], result: str, view: View) -> str:
    if "(read_only)" in result:
        return "This session is read-only, so I can't change the workflow."
    if "(declined)" in result or "declined" in result.lower():
        return "You declined the change, so I left the workflow as it was."
    message = re.sub(r"^Error \([\w_]+\):\s*", "", result)
    if _fans_out(name):
        label = _q(view, str(args.get("job_key", "")))
        reason = re.sub(r"^No code was written for '[^']*':\s*", "", message)
        return reason if label in reason else f"No code was written for {label}: {reason}"
    spec = spec_for(name)
    return f"I couldn't {spec.action if spec else 'do that'}: {message}"


def _fans_out(name: str) -> bool:
    spec = spec_for(name)
    return spec is not None and spec.fans_out
