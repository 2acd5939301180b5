"""The WebSocket wire, both ways: client frames in, server frames out.

Client frames (``turn``, ``confirm``, ``cancel``) are validated strictly
(unknown keys are errors) by :func:`parse_frame`, which raises
:class:`FrameError` with a stable ``code``.

Server frames are the turn's agent events (:mod:`agents.events`) with the
``turn_id`` they belong to (and, on ``workflow`` frames, the ``workflow_id``),
plus ``turn.started`` and ``error``. :func:`error_frame` is the one way to build
an error frame. ``wire()`` is a frame's JSON object (``None`` fields left out);
the connection adds ``seq``.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from agents.api import (
    ConfirmEvent,
    DeltaEvent,
    Event,
    MessageEvent,
    PlanProgressEvent,
    PlanProposedEvent,
    ProposalEvent,
    RouteEvent,
    RunCompletedEvent,
    RunProgressEvent,
    StatusEvent,
    TurnCompletedEvent,
    WorkflowEvent,
)
from app.text import ClientText
from tools.errors import PlanwrightError
from tools.testrun import SampleResponse

# --- client -> server -------------------------------------------------------


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PageContext(_Frame):
    page: Literal["workflow", "job"] = "workflow"
    job_key: str | None = Field(None, max_length=100, pattern=r"^[A-Za-z0-9_-]+$")


class TurnFrame(_Frame):
    type: Literal["turn"]
    # No length bound here: the frame size limit bounds it, and the configured
    # PLANWRIGHT_MAX_MESSAGE_TOKENS answers message_too_long (app.turns).
    content: ClientText = Field(min_length=1)
    context: PageContext = Field(default_factory=PageContext)
    errors: ClientText | None = Field(None, max_length=20_000)
    mode: Literal["edit", "plan"] | None = None
    """``plan`` asks for a project plan (DESIGN §5a); on a workflow session, for the
    workflow's project. Left out: edit a workflow session's workflow, or, on a project
    session, let the planner decide whether the message calls for a plan."""
    review: bool | None = None
    """``true``: this turn works on a draft and ends with a ``proposal`` (DESIGN §5c);
    ``false``: it applies as it goes; left out: the session's own setting."""

    @field_validator("content")
    @classmethod
    def _says_something(cls, content: str) -> str:
        # "" is refused by min_length; spaces, newlines or invisible format characters
        # (a zero-width space) alone ask for nothing either: refused the same way, before
        # a turn starts or anything is recorded.
        if all(c.isspace() or unicodedata.category(c) == "Cf" for c in content):
            raise ValueError("a turn needs some text, not only spaces")
        return content


class ConfirmFrame(_Frame):
    type: Literal["confirm"]
    request_id: str = Field(min_length=1, max_length=200)
    approved: bool
    feedback: ClientText | None = Field(None, max_length=2000)
    """Optional words with the answer; stored with the turn's confirmation."""


class CancelFrame(_Frame):
    type: Literal["cancel"]


class ReviewFrame(_Frame):
    """The answer to a ``proposal``: the ids of the changes to apply (all of them: accept;
    ``[]``: reject)."""

    type: Literal["review"]
    request_id: str = Field(min_length=1, max_length=200)
    accepted: list[Annotated[str, Field(min_length=1, max_length=40)]] = Field(max_length=500)


class RunFrame(_Frame):
    """Test-run the session's workflow on a sample (DESIGN §5c); streams ``run.progress``
    then ``run.completed``. Without ``version``: the head, or while the session has an
    open proposal, the proposed draft (``draft: true``)."""

    type: Literal["run"]
    version: int | None = Field(None, ge=1, strict=True)
    input: dict[str, Any] | None = None
    responses: list[SampleResponse] = Field(default_factory=list, max_length=200)
    timeout_s: float | None = Field(None, gt=0)  # over the limit: timeout_too_long (app.runs)


AnyClientFrame = TurnFrame | ConfirmFrame | CancelFrame | ReviewFrame | RunFrame
ClientFrame = Annotated[AnyClientFrame, Field(discriminator="type")]
_CLIENT_ADAPTER: TypeAdapter[AnyClientFrame] = TypeAdapter(ClientFrame)


class FrameError(PlanwrightError):
    """A client frame that cannot be accepted; answered with an ``error`` frame."""

    code = "invalid_frame"


def parse_frame(text: str) -> AnyClientFrame:
    """Parse one client frame or raise :class:`FrameError` saying what is wrong."""
    try:
        return _CLIENT_ADAPTER.validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise FrameError("The frame is not valid JSON.", code="invalid_json") from exc
        if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
            raise FrameError(
                "Frames have a type of 'turn', 'confirm', 'review', 'run' or 'cancel'.",
                code="unknown_frame_type",
            ) from exc
        if first["type"] == "model_type" and not first["loc"]:
            raise FrameError("A frame is a JSON object.", code="invalid_frame") from exc
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'][1:]) or 'frame'}: {e['msg']}"
            for e in exc.errors()[:5]
        )
        raise FrameError(f"Invalid frame: {problems}.", code="invalid_frame") from exc


# --- server -> client -------------------------------------------------------


class _ServerFrame(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def wire(self) -> dict[str, Any]:
        """The frame's JSON object (fields that are ``None`` are left out)."""
        return self.model_dump(mode="json", exclude_none=True)


class TurnStartedFrame(_ServerFrame):
    type: Literal["turn.started"] = "turn.started"
    turn_id: str


class QueuedFrame(_ServerFrame):
    """The turn waits for another turn on the workflow: ``position`` 1 is next. Sent
    again each time it moves up; ``turn.started`` follows when its turn comes (or an
    ``error``: ``cancelled`` after a ``cancel``). No ``turn_id``: none exists yet."""

    type: Literal["queued"] = "queued"
    position: int = Field(ge=1)


class RouteFrame(RouteEvent):
    turn_id: str


class StatusFrame(StatusEvent):
    turn_id: str


class WorkflowFrame(WorkflowEvent):
    """A committed version: a turn's own (with ``turn_id``), a bus event or a snapshot."""


class DeltaFrame(DeltaEvent):
    turn_id: str


class MessageFrame(MessageEvent):
    turn_id: str


class ConfirmRequiredFrame(ConfirmEvent):
    turn_id: str


class PlanProposedFrame(PlanProposedEvent):
    turn_id: str


class PlanProgressFrame(PlanProgressEvent):
    turn_id: str


class ProposalFrame(ProposalEvent):
    turn_id: str


class RunProgressFrame(RunProgressEvent):
    turn_id: str | None = None
    """Set when the run was started by a turn (the chat tool); a ``run`` frame's has none."""


class RunCompletedFrame(RunCompletedEvent):
    turn_id: str | None = None


class TurnCompletedFrame(TurnCompletedEvent):
    turn_id: str


class ErrorFrame(_ServerFrame):
    type: Literal["error"] = "error"
    code: str
    message: str
    turn_id: str | None = None
    changes: list[str] | None = None
    """A refused review answer: the proposal's change ids it was refused for."""


ServerFrame = Annotated[
    TurnStartedFrame
    | QueuedFrame
    | RouteFrame
    | StatusFrame
    | WorkflowFrame
    | DeltaFrame
    | MessageFrame
    | ConfirmRequiredFrame
    | PlanProposedFrame
    | PlanProgressFrame
    | ProposalFrame
    | RunProgressFrame
    | RunCompletedFrame
    | TurnCompletedFrame
    | ErrorFrame,
    Field(discriminator="type"),
]
SERVER_FRAME_ADAPTER: TypeAdapter[ServerFrame] = TypeAdapter(ServerFrame)


def event_frame(event: Event, *, turn_id: str, workflow_id: str | None) -> ServerFrame:
    """A turn's agent event as the frame sent to its client (a plan turn's ``workflow``
    events name their own workflow; a workflow turn's are about the session's)."""
    fields = event.model_dump()
    if isinstance(event, WorkflowEvent):
        own = event.workflow_id or workflow_id
        return WorkflowFrame(**{**fields, "turn_id": turn_id, "workflow_id": own})
    frame: ServerFrame = SERVER_FRAME_ADAPTER.validate_python({**fields, "turn_id": turn_id})
    return frame


def error_frame(
    code: str, message: str, turn_id: str | None = None, *, changes: list[str] | None = None
) -> ErrorFrame:
    """The one way to build an ``error`` frame (``turn_id`` when it is about a turn)."""
    return ErrorFrame(code=code, message=message, turn_id=turn_id or None, changes=changes)


def wire(frame: ServerFrame | dict[str, Any]) -> dict[str, Any]:
    """A frame's JSON object; frames relayed from the bus are already that."""
    return frame if isinstance(frame, dict) else frame.wire()
