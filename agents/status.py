"""Human status lines for tools ("Adding 3 steps…" -> "Added Check coverage, …")."""

from __future__ import annotations

from typing import Any

_SPINNER = {
    "create_workflow": "Building the workflow…",
    "update_workflow": "Renaming the workflow…",
    "add_jobs": "Adding {n} step{s}…",
    "update_jobs": "Updating {n} step{s}…",
    "remove_jobs": "Removing {n} step{s}…",
    "add_edges": "Connecting {n} edge{s}…",
    "update_edges": "Updating {n} edge{s}…",
    "remove_edges": "Removing {n} edge{s}…",
    "set_trigger": "Setting the trigger…",
    "inspect_job_code": "Reading code…",
    "search_documentation": "Searching the documentation…",
    "call_job_code_agent": "Writing code…",
}


def spinner_text(name: str, args: Any) -> str:
    count = 1
    if isinstance(args, dict):
        for field in ("jobs", "keys", "edges", "job_keys"):
            if isinstance(args.get(field), list):
                count = len(args[field])
                break
    template = _SPINNER.get(name, f"Running {name}…")
    return template.format(n=count, s="" if count == 1 else "s")


def settled_text(result_text: str) -> str:
    first = result_text.strip().splitlines()[0] if result_text.strip() else ""
    return first if len(first) <= 160 else first[:157] + "…"
