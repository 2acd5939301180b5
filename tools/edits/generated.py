"""Steps whose code the server writes (review gates, status transitions, rule tables).

These tools are deterministic: the code they write is a template filled with the
caller's words, checked like any job code before it is stored, so a step they add
runs as soon as it is added. Values reach JavaScript as JSON literals (a JSON
string or array is a valid JavaScript literal), never spliced in as code.
"""

from __future__ import annotations

import json
from typing import Any

from tools.base import ToolContext
from tools.document.names import derive_key
from tools.document.structure import Draft, UpdateEntry
from tools.edits.primitives import add_edge, add_job
from tools.edits.specs import EdgeSpec, JobSpec
from tools.errors import ToolInputError
from tools.jobcode import check_job_code


def js(value: Any) -> str:
    """``value`` as a JavaScript literal."""
    return json.dumps(value, ensure_ascii=False)


def js_string(text: str) -> str:
    """``text`` as a single-quoted JavaScript string (the style of edge conditions)."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return f"'{escaped}'"


def unique_key(draft: Draft, name: str) -> str:
    """A key derived from ``name`` that no step or trigger has yet."""
    base = derive_key(name) or "step"
    taken = set(draft.structure.jobs) | set(draft.structure.triggers)
    key, n = base, 1
    while key in taken:
        n += 1
        key = f"{base[:90]}-{n}"
    return key


def add_coded_step(
    draft: Draft,
    ctx: ToolContext,
    name: str,
    adaptor: str,
    code: str,
    *,
    credential: str | None = None,
) -> str:
    """Add a step named ``name`` with ``code`` (checked first); returns its key."""
    key = unique_key(draft, name)
    add_job(draft, JobSpec(key=key, name=name, adaptor=adaptor), ctx)
    job = draft.structure.jobs[key]
    problems = check_job_code(code, ctx.catalogue.get(job.adaptor))
    if problems:  # a template bug, never the caller's: say it plainly rather than store it
        raise ToolInputError(
            f"The code for {name!r} did not pass the checks: {problems[0]}.",
            code="generated_code_invalid",
        )
    values: dict[str, Any] = {"body": code}
    if credential:
        values["credential"] = credential
    draft.apply(UpdateEntry("jobs", key, values))
    return key


def connect(
    draft: Draft,
    ctx: ToolContext,
    source: str,
    target: str,
    condition_type: str | None = None,
    expression: str | None = None,
    label: str | None = None,
) -> str:
    spec = EdgeSpec.model_validate(
        {
            "source": source,
            "target": target,
            **({"condition_type": condition_type} if condition_type else {}),
            **({"condition_expression": expression} if expression else {}),
            **({"condition_label": label} if label else {}),
        }
    )
    return add_edge(draft, spec, ctx)


def main_successors(draft: Draft, key: str) -> list[str]:
    """The steps that run after ``key`` when it succeeds, whatever the data (its
    on-success and always edges)."""
    return [
        e.target_job
        for e in draft.structure.edges_from(key)
        if e.condition_type in ("on_job_success", "always") and e.enabled
    ]
