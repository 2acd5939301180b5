"""Client -> server WebSocket frames, validated strictly (unknown keys are errors)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
)

from app.text import ClientText


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PageContext(_Frame):
    page: Literal["workflow", "job"] = "workflow"
    job_key: str | None = Field(None, max_length=100, pattern=r"^[A-Za-z0-9_-]+$")


class TurnFrame(_Frame):
    type: Literal["turn"]
    content: ClientText = Field(min_length=1, max_length=20_000)
    context: PageContext = Field(default_factory=PageContext)
    errors: ClientText | None = Field(None, max_length=20_000)


class ConfirmFrame(_Frame):
    type: Literal["confirm"]
    request_id: str = Field(min_length=1, max_length=200)
    approved: bool


class CancelFrame(_Frame):
    type: Literal["cancel"]


ClientFrame = Annotated[TurnFrame | ConfirmFrame | CancelFrame, Field(discriminator="type")]
_ADAPTER: TypeAdapter[TurnFrame | ConfirmFrame | CancelFrame] = TypeAdapter(ClientFrame)


class FrameError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def parse_frame(text: str) -> TurnFrame | ConfirmFrame | CancelFrame:
    """Parse one client frame or raise :class:`FrameError` saying what is wrong."""
    try:
        return _ADAPTER.validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise FrameError("invalid_json", "The frame is not valid JSON.") from exc
        if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
            raise FrameError(
                "unknown_frame_type",
                "Frames have a type of 'turn', 'confirm' or 'cancel'.",
            ) from exc
        if first["type"] == "model_type" and not first["loc"]:
            raise FrameError("invalid_frame", "A frame is a JSON object.") from exc
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'][1:]) or 'frame'}: {e['msg']}"
            for e in exc.errors()[:5]
        )
        raise FrameError("invalid_frame", f"Invalid frame: {problems}.") from exc
