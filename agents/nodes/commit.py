"""Persisting a mutation from inside a node: the committer first, then the caller emits."""

from __future__ import annotations

from agents.runtime import CommitError, TurnRuntime, commit_change
from agents.state import TurnState
from tools.base import ToolResult
from tools.document import WorkflowDocument


async def commit(
    rt: TurnRuntime,
    state: TurnState,
    doc: WorkflowDocument,
    version: int,
    tool: str,
    result: ToolResult,
) -> tuple[str, int]:
    """Commit ``doc`` as the version after ``version``; returns its YAML and number.

    On failure the live document is dropped (it holds the uncommitted edit) and a
    :class:`CommitError` propagates: the turn ends, nothing is published.
    """
    yaml = doc.to_yaml()
    try:
        new_version = await commit_change(
            rt.committer,
            yaml=yaml,
            name=doc.name,
            base_version=version,
            tool=tool,
            changes=result.changes,
            summary=result.headline,
            turn_id=state.get("turn_id", ""),
        )
    except CommitError:
        rt.forget_document()
        raise
    rt.adopt(doc, new_version)
    return yaml, new_version
