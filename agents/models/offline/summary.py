"""The final answer of a planner turn, written from the tool calls and their results.

Stateless: everything comes from the conversation (the assistant's tool_use
blocks, the matching tool_result blocks) and the updated structure.
"""

from __future__ import annotations

from typing import Any

from agents.models.offline.questions import chart
from agents.models.offline.schedule import describe_trigger
from agents.models.offline.view import EdgeView, View, condition_words


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
        return [f'Renamed the workflow to "{args.get("name")}".']
    if name == "add_jobs":
        return [
            f'Added the step "{job["name"]}" ({str(job["adaptor"]).split("@")[0]}).'
            for job in args.get("jobs", [])
        ]
    if name == "update_jobs":
        lines = []
        for job in args.get("jobs", []):
            key = job.get("new_key") or job["key"]
            if job.get("name"):
                lines.append(f'Renamed step {job["key"]} to "{job["name"]}".')
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
            text += ' The workflow is empty now: tell me what it should do, e.g. "create a '
            'workflow that fetches patients from dhis2 and upserts them to postgres".'
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
        trigger = view.trigger() or (view.triggers[0] if view.triggers else None)
        if trigger is None:
            return [result]
        text = f"The trigger is now {describe_trigger(trigger)}."
        if not trigger.get("enabled") and "enabled" not in args:
            text += ' Say "enable the trigger" to turn it on.'
        return [text]
    if name == "call_job_code_agent":
        return [f"Code for {_q(view, args.get('job_key', ''))}: {result}"]
    if name == "inspect_job_code":
        return [f"```\n{result}\n```"]
    if name == "search_documentation":
        entries = result.split("\n\n")[:3]
        return ["From the documentation:\n" + "\n\n".join(entries)]
    return [result]


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
            if is_error:
                errors.append(_error_text(name, result))
                continue
            done += describe_call(name, args, result, view)
            for line in result.split("\n"):
                if line.startswith("Note: ") and line not in notes:
                    notes.append(line)
    if errors:
        text = "I couldn't do all of that. " + " ".join(dict.fromkeys(errors))
        if done:
            text += "\nWhat did change:\n" + "\n".join(f"- {line}" for line in done)
        else:
            text += " Nothing was changed."
        return text
    if not done:
        return "Nothing needed to change."
    body = done[0] if len(done) == 1 else "\n".join(f"- {line}" for line in done)
    return body + ("\n" + "\n".join(notes) if notes else "")


def _error_text(name: str, result: str) -> str:
    if "(read_only)" in result:
        return "This session is read-only, so I can't change the workflow."
    if "(declined)" in result or "declined" in result.lower():
        return "You declined the change, so I left the workflow as it was."
    return f"{name} failed: {result.removeprefix('Error ')}"
