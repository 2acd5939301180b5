"""``preview_change``: what an edit would do, tried on a copy ("what happens if I remove X?").

A read tool (read-only sessions keep it): it runs one structural tool's call on a copy
of the document and answers with the call's impact (``tools.document.impact``) and
what the call would change. The real document is never touched. ``simulate`` is the
same trial for a whole round of calls; the confirmation before a round uses it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from tools.base import ReadOutput, ToolArgs, ToolContext, ToolResult, ToolSpec
from tools.document import WorkflowDocument
from tools.document.impact import Impact, impact
from tools.document.structure import Structure
from tools.errors import ToolInputError

NO_IMPACT = (
    "No step or trigger would be removed, no step would lose its path from a trigger, no "
    "connection would be removed or disabled and no trigger would change type."
)
LEAD = "Nothing was changed; this is what the change would do. "
"""How every answer starts."""
REPORT = "\nThe {tool} call would report: "
"""Where the impact ends and the tried call's own summary begins."""


class PreviewChangeArgs(ToolArgs):
    """What an edit would do: runs one edit tool's call on a copy and answers with its
    impact (steps and triggers removed, steps left unreachable, connections removed or
    disabled, a trigger's type changed). Changes nothing; works in read-only sessions."""

    tool: str = Field(
        min_length=1,
        max_length=64,
        description="The edit tool to try, e.g. 'remove_jobs'.",
    )
    input: dict[str, Any] = Field(description="That tool's input, exactly as you would call it.")


@dataclass
class Simulation:
    """A round of calls tried on a copy of the document."""

    before: Structure
    """The document's structure before the calls."""
    after: Structure
    """The copy's structure after every call that succeeded."""
    results: list[ToolResult] = field(default_factory=list)
    """Each call's result on the copy, in order (a refused call changed nothing)."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Old job key -> new key, for every step a call rekeyed."""

    @property
    def impact(self) -> Impact:
        return impact(self.before, self.after, renamed=self.renamed)


def simulate(
    doc: WorkflowDocument,
    calls: Sequence[tuple[str, Mapping[str, Any]]],
    ctx: ToolContext,
) -> Simulation:
    """Run ``calls`` in order on a copy of ``doc`` with the real tools; ``doc`` is not
    changed. Ids minted on the copy come from a factory of their own, so a trial takes
    none of the ids the real calls will get."""
    from tools.registry import run_tool  # the registry imports this module

    copy = doc.copy()
    trial = _trial_context(ctx)
    out = Simulation(before=doc.structure, after=doc.structure)
    for name, args in calls:
        result = run_tool(copy, name, args, context=trial)
        out.results.append(result)
        for change in result.changes if result.ok else ():
            # A rekey's change is ("renamed", "job", <new key>, "from <old key>").
            if change.action == "renamed" and change.kind == "job":
                old = change.detail.removeprefix("from ")
                first = next((k for k, v in out.renamed.items() if v == old), old)
                out.renamed[first] = change.key
    out.after = copy.structure
    return out


def _trial_context(ctx: ToolContext) -> ToolContext:
    trial = ToolContext(
        new_id=lambda: str(uuid.uuid4()),
        catalogue_loader=ctx.catalogue_loader,
        docs_loader=ctx.docs_loader,
    )
    trial.__dict__["catalogue"] = ctx.catalogue  # the cached_property: loaded once, shared
    return trial


def preview_change(doc: WorkflowDocument, args: PreviewChangeArgs, ctx: ToolContext) -> ReadOutput:
    from tools.registry import spec_for

    spec = spec_for(args.tool)
    if spec is None or not spec.structural:
        raise ToolInputError(
            f"{args.tool!r} is not an edit tool; preview_change tries the calls of edit tools "
            "(remove_jobs, remove_edges, update_edges, set_trigger, ...).",
            code="not_an_edit",
        )
    trial = simulate(doc, [(args.tool, args.input)], ctx)
    result = trial.results[0]
    if not result.ok:
        raise ToolInputError(
            f"That change could not be made, so it would have no effect: {result.message}",
            code=result.error_code or "invalid_input",
        )
    found = trial.impact
    text = LEAD + (found.text if found else NO_IMPACT)
    text += REPORT.format(tool=args.tool) + result.message
    return ReadOutput(
        text,
        {
            "impact": found.sentences,
            "changes": [c.as_dict() for c in result.changes],
        },
    )


TOOL = ToolSpec(
    "preview_change",
    PreviewChangeArgs,
    "read",
    preview_change,
    spinner="Working out what that would change…",
    action="preview the change",
)
