"""What one chat session knows (:class:`SessionState`): the workflow as last seen, the
socket, the turn under way and what it streamed, the proposal or plan waiting for an
answer, the last test run.

The parts of :class:`~app.client.session.ChatClient` (``slash``, ``run_commands``,
``turns``, ``frames``) are mixins over this state; a part that calls another's method
declares it (as the store's query mixins do), and ``ChatClient`` lists the parts that
define a method before the parts that only declare it."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection

from app.client.rest import Rest
from app.client.terminal import LineReader, Output
from app.client.tree import render_tree
from tools.document import WorkflowDocument


@dataclass
class SessionState:
    """The session's fields, and what every part does with the workflow it shows."""

    rest: Rest
    out: Output
    lines: LineReader
    ws_url: str
    session_id: str
    workflow_id: str | None
    """None on a project session."""
    read_only: bool
    name: str
    version: int
    yaml: str
    project_id: str | None = None
    mode: str | None = None
    """The mode every turn is sent with (``--mode``); None: the server's default."""
    pending: dict[str, Any] | None = None
    """The session's pending confirmation when it opened (a plan or a proposal waiting
    for review)."""
    review: bool = False
    """Review mode (``--review``): turns work on a draft and end with a proposal to accept
    all, some or none of (DESIGN §5c); every turn frame says so too."""
    ws: ClientConnection | None = None
    turn_events: asyncio.Queue[tuple[str, dict[str, Any]]] = field(default_factory=asyncio.Queue)
    in_turn: bool = False
    streamed: bool = False
    turn_changes: set[str] = field(default_factory=set)
    turn_start_version: int = 0
    quitting: bool = False
    fatal: str | None = None
    plan_names: dict[str, str] = field(default_factory=dict)
    proposal: dict[str, Any] | None = None
    """The review-mode proposal last seen open (``review.proposal_from``'s form)."""
    prompting: str | None = None
    """The request id of the proposal whose review prompt is showing."""
    answered: set[str] = field(default_factory=set)
    """Request ids of the proposals answered here (the server may still list one as open
    for a moment after the answer is sent)."""
    reopened: dict[str, Any] | None = None
    """A proposal found open after reconnecting: the prompt loop shows it next."""
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    """Set to interrupt the ``you>`` prompt (a proposal came back after reconnecting)."""
    running: bool = False
    """A ``/run`` is waiting for its ``run.completed``."""
    last_run: dict[str, Any] | None = None
    """The last test run seen in this session (a ``/run`` or the planner's)."""
    sent: str = ""
    """The words of the last turn sent."""
    offered_plan: str | None = None
    """A message the server offered to plan (its reply's ``offer: plan``): ``/plan`` with
    nothing after it sends it again as a plan."""
    said: str = ""
    """The turn's reply as shown so far (a proposal's question repeats it: a review-mode
    turn streams its reply and then ends with the proposal, no ``message`` between)."""

    @property
    def on_project(self) -> bool:
        return self.workflow_id is None

    def apply(self, version: int, yaml: str) -> None:
        self.version, self.yaml = version, yaml
        with contextlib.suppress(Exception):
            self.name = WorkflowDocument.from_yaml(yaml).name or self.name

    def print_tree(self, changed: set[str]) -> None:
        self.out.lines(render_tree(self.yaml, changed=changed, paint=self.out.paint))
