"""The code sub-agent's one tool: edits to a single step's body, applied by the server."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from tools.base import ToolSpec


class CodeEditArgs(BaseModel):
    """One edit of the step's code."""

    action: Literal["replace", "rewrite"] = Field(
        description="'replace' swaps old_code (which must occur exactly once) for new_code; "
        "'rewrite' replaces the whole body with new_code."
    )
    old_code: str | None = Field(None, description="Exact current text to replace.")
    new_code: str = Field(description="The new code.")


class EditJobCodeArgs(BaseModel):
    """Change the step's code. Edits apply in order to the current code."""

    edits: list[CodeEditArgs] = Field(
        min_length=1, description="The edits, applied in order; all apply or none."
    )


TOOL = ToolSpec(
    "edit_job_code",
    EditJobCodeArgs,
    "code_edit",
    spinner="Writing code…",
    action="change the code",
)
