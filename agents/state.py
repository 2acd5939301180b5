"""The state of one turn, as LangGraph checkpoints it.

The document travels as YAML text plus its committed version, so a paused
turn can resume in another process from the checkpointer alone. History is
user text and final assistant text only; tool traffic lives in ``messages``
for the length of the turn.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict


def merge_code_results(
    left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """Sub-agent results accumulate within a round; ``None`` resets for the next one."""
    if right is None:
        return []
    return [*(left or []), *right]


class TurnInput(TypedDict, total=False):
    """What the service hands the graph to start a turn."""

    turn_id: str
    """The turn's id; also the checkpointer's thread id, so a pause resumes by it."""
    workflow_id: str
    """The workflow the turn edits."""
    user_text: str
    """The user's message, as sent."""
    page: Literal["workflow", "job"]
    """Where the user is: the whole workflow, or one step's page."""
    job_key: str | None
    """The step on the page, when ``page`` is ``job``."""
    read_only: bool
    """A reviewer's session: no tool that changes the workflow runs."""
    errors: str | None
    """Problems the user's editor reported with the document, if any."""
    plan_context: str | None
    """Set when a plan turn builds this workflow: the whole plan, so the planner builds
    its part to the plan's contracts."""
    history: list[dict[str, str]]
    """Earlier turns of the session: user text and final assistant text only."""
    yaml: str
    """The document as committed at ``version`` (in review mode: the draft so far)."""
    version: int
    """The committed version ``yaml`` is at (in review mode: ``base_version`` plus the
    draft's changes, never a stored version)."""
    review: bool
    """Review mode (DESIGN §5c): tools run on a draft, nothing is committed or published,
    and the turn ends with a proposal of its changes to accept or reject."""
    last_run: str | None
    """The session's last failed test run, in words (step, error, input), for "fix it"."""


class TurnState(TurnInput, total=False):
    """Everything a turn carries between nodes; checkpointed after each."""

    route: str
    """Where the router sent the turn: ``planner`` or ``job_code``."""
    messages: list[dict[str, Any]]
    """The planner's conversation for this turn (Messages API blocks, tool traffic too)."""
    history_messages: int
    """How many of ``messages`` are earlier turns (the cacheable prefix of every round)."""
    pending: list[dict[str, Any]]
    """The tool_use blocks of the planner's last reply, still to run."""
    approvals: dict[str, bool]
    """The user's answer to a confirmation, per tool_use id it covered."""
    confirmation_feedback: str | None
    """Words the user sent with that answer; given to the planner with the round's
    results, then cleared."""
    round_results: dict[str, dict[str, Any]]
    """tool_result blocks of the current round by tool_use id, while sub-agents run."""
    code_results: Annotated[list[dict[str, Any]], merge_code_results]
    """What each code sub-agent of the round returned; reset to [] by ``None``."""
    tool_calls: int
    """Tool calls spent this turn, against ``AgentConfig.max_tool_calls``."""
    tool_rounds: int
    """Planner rounds that ran tools."""
    changes: list[dict[str, str]]
    """Every change committed this turn, in order."""
    final_text: str
    """The reply the user gets at the end."""
    offer: str | None
    """The mode the reply offers to continue in (a tool whose spec ``offers`` it ran)."""
    base_version: int
    """Review mode: the committed version the draft started from."""
    base_yaml: str
    """Review mode: the document at ``base_version`` (the diff's left side)."""
    draft: list[dict[str, Any]]
    """Review mode: one entry per change made on the draft, in order: ``id``, ``tool``,
    ``summary`` and ``recipe`` (how to apply it again on another head, ``agents.review``)."""
    proposal: dict[str, Any]
    """Review mode: what the turn pauses on (``request_id``, ``question``, and the
    ``proposal``: base version, draft YAML, diff, changes with their impact)."""


class CodeTask(TypedDict):
    """What one job-code sub-agent gets through ``Send``."""

    tool_use_id: str
    """The planner's call this sub-agent answers."""
    tool: str
    """That call's tool name (the fan-out tool)."""
    job_key: str
    """The step whose code to write."""
    message: str
    """What the planner asked the code to do."""
    yaml: str
    """The document after the round's structural tools."""
    version: int
    """Its committed version."""
