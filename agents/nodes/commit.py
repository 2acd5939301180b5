"""Persisting a mutation from inside a node: the committer first, then the caller emits.

In review mode (DESIGN §5c) a mutation is not committed: :func:`land` keeps it on the
turn's draft with the recipe that applies it again, and nothing is emitted, so no
watcher sees a change before it is accepted.
"""

from __future__ import annotations

from typing import Any

from agents.events import WorkflowEvent, workflow_event
from agents.review import draft_entry
from agents.runtime import Commit, CommitError, TurnRuntime, commit_change
from agents.state import TurnState
from tools.base import ToolResult
from tools.document import WorkflowDocument


async def commit(rt: TurnRuntime, doc: WorkflowDocument, change: Commit) -> int:
    """Commit ``change`` (``doc`` as YAML, the version after ``change.base_version``);
    returns the new version's number and keeps ``doc`` live at it.

    On failure the live document is dropped (it holds the uncommitted edit) and a
    :class:`CommitError` propagates: the turn ends, nothing is published.
    """
    try:
        new_version = await commit_change(rt.committer, change)
    except CommitError:
        rt.forget_document()
        raise
    rt.adopt(doc, new_version)
    return new_version


async def land(
    rt: TurnRuntime,
    state: TurnState,
    doc: WorkflowDocument,
    version: int,
    tool: str,
    result: ToolResult,
    *,
    recipe: dict[str, Any],
    draft: list[dict[str, Any]],
) -> tuple[str, int, WorkflowEvent | None]:
    """A mutation made: committed (returning its ``workflow`` event to emit), or in review
    mode appended to ``draft`` (no event: nothing is published before acceptance).

    A draft's version counts the draft's changes from its base; it is never stored.
    """
    if not state.get("review"):
        yaml, turn_id = doc.to_yaml(), state.get("turn_id", "")
        change = Commit.of_tool(
            tool, result, yaml=yaml, name=doc.name, base_version=version, turn_id=turn_id
        )
        new_version = await commit(rt, doc, change)
        return yaml, new_version, workflow_event(yaml, new_version, result.changes)
    draft.append(draft_entry(draft, result.headline, recipe))
    rt.adopt(doc, version + 1)
    return doc.to_yaml(), version + 1, None
