"""The state of one turn, as LangGraph checkpoints it.

The document travels as YAML text plus its committed version, so a paused
turn can resume in another process from the checkpointer alone. History is
user text and final assistant text only; tool traffic lives in ``messages``
for the length of the turn.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict


def add_usage(left: dict[str, int] | None, right: dict[str, int] | None) -> dict[str, int]:
    total = dict(left or {})
    for key, value in (right or {}).items():
        total[key] = total.get(key, 0) + value
    return total


def merge_code_results(
    left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """Sub-agent results accumulate within a round; ``None`` resets for the next one."""
    if right is None:
        return []
    return [*(left or []), *right]


class TurnInput(TypedDict, total=False):
    turn_id: str
    workflow_id: str
    user_text: str
    page: Literal["workflow", "job"]
    job_key: str | None
    read_only: bool
    errors: str | None
    history: list[dict[str, str]]
    yaml: str
    version: int


class TurnState(TurnInput, total=False):
    route: str
    messages: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    approvals: dict[str, bool]
    round_results: dict[str, dict[str, Any]]
    code_results: Annotated[list[dict[str, Any]], merge_code_results]
    tool_calls: int
    tool_rounds: int
    usage: Annotated[dict[str, int], add_usage]
    changes: list[dict[str, str]]
    final_text: str


class CodeTask(TypedDict):
    """What one job-code sub-agent gets through ``Send``."""

    tool_use_id: str
    job_key: str
    message: str
    yaml: str
    version: int
