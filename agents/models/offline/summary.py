"""The final answer of a planner turn, written from the tool calls and their results.

Stateless: everything comes from the conversation (the assistant's tool_use
blocks, the matching tool_result blocks) and the updated structure.
"""

from __future__ import annotations

import re
from typing import Any

from agents.models.offline.code_requests import keeps_existing_code
from agents.models.offline.grammar import oxford
from agents.models.offline.questions import chart
from agents.models.offline.schedule import describe_trigger
from agents.models.offline.view import EdgeView, View, condition_words
from tools.document.names import sanitise_name

_STRUCTURE = "\n\nThe workflow now:"
_ACTIONS = {
    "create_workflow": "create the workflow",
    "update_workflow": "rename the workflow",
    "add_jobs": "add the step",
    "update_jobs": "change the step",
    "remove_jobs": "remove the step",
    "add_edges": "connect the steps",
    "remove_edges": "disconnect the steps",
    "update_edges": "change the edge",
    "set_trigger": "change the trigger",
    "inspect_job_code": "show the code",
    "search_documentation": "search the documentation",
}
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


def describe_call(name: str, args: dict[str, Any], result: str, view: View) -> list[str]:
    """Plain sentences for one successful call."""
    if name == "create_workflow":
        text = f'Created the workflow "{view.name or args.get("name")}":\n{chart(view)}'
        if view.name == "New workflow":
            text += '\nRename it with "rename the workflow to ...".'
        return [text]
    if name == "update_workflow":
        saved = re.search(r"Renamed the workflow to '([^']*)'", result)
        return [f'Renamed the workflow to "{saved.group(1) if saved else view.name}".']
    if name == "add_jobs":
        return [
            f'Added the step "{sanitise_name(job["name"])}" ({str(job["adaptor"]).split("@")[0]}).'
            for job in args.get("jobs", [])
        ]
    if name == "update_jobs":
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
    if name == "remove_jobs":
        sentences = [s for s in result.split(". ") if not s.startswith("Also removed")]
        text = ". ".join(sentences).rstrip(".") + "."
        if "held code" in result:
            text += " You can get the code back by reverting to an earlier version."
        if not view.jobs:
            text += (
                ' The workflow is empty now: tell me what it should do, e.g. "create a '
                'workflow that fetches patients from dhis2 and upserts them to postgres".'
            )
        return [text]
    if name == "add_edges":
        return [
            f"Connected {_q(view, e['source'])} → {_q(view, e['target'])} ({_edge_words(e)})."
            for e in args.get("edges", [])
        ]
    if name == "remove_edges":
        return [
            f"Disconnected {_q(view, e['source'])} → {_q(view, e['target'])}."
            for e in args.get("edges", [])
        ]
    if name == "update_edges":
        return [_edge_update(e, view) for e in args.get("edges", [])]
    if name == "set_trigger":
        return [_trigger_words(args, result, view)]
    if name == "call_job_code_agent":
        label = _q(view, args.get("job_key", ""))
        operations = ", ".join(dict.fromkeys(re.findall(r"\b[\w$.]+\(\.\.\.\)", result)))
        count = re.search(r"Wrote (\d+) lines?", result)
        if count and operations:
            return [f"Wrote starter code for {label} ({count.group(1)} lines: {operations})."]
        return [f"Wrote the code for {label}."]
    if name == "inspect_job_code":
        return [f"```\n{result}\n```"]
    if name == "search_documentation":
        entries = result.split("\n\n")[:3]
        return ["From the documentation:\n" + "\n\n".join(entries)]
    return [f"Done: {_ACTIONS.get(name, name)}."]


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


def final_text(rounds: list[list[tuple[str, dict[str, Any], str, bool]]], view: View) -> str:
    """``rounds``: per round, (tool name, input, result text, is_error) in call order."""
    done: list[str] = []
    errors: list[str] = []
    notes: list[str] = []
    for calls in rounds:
        for name, args, result, is_error in calls:
            result = result.split(_STRUCTURE, 1)[0].strip()
            if is_error:
                errors.append(_error_text(name, args, result, view))
                continue
            done += describe_call(name, args, result, view)
            for line in result.split("\n"):
                if line.startswith("Note: ") and line not in notes:
                    notes.append(line)
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


def _code_notes(rounds: list[list[tuple[str, dict[str, Any], str, bool]]], view: View) -> list[str]:
    """Steps a "write code for all steps" left alone because they already had code."""
    asked = [
        args
        for calls in rounds
        for name, args, _, _ in calls
        if name == "call_job_code_agent" and keeps_existing_code(str(args.get("message", "")))
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
    if name == "call_job_code_agent":
        label = _q(view, str(args.get("job_key", "")))
        reason = re.sub(r"^No code was written for '[^']*':\s*", "", message)
        return reason if label in reason else f"No code was written for {label}: {reason}"
    return f"I couldn't {_ACTIONS.get(name, 'do that')}: {message}"
