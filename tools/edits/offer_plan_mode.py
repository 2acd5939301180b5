"""``offer_plan_mode``: a message that describes several separate processes, sent in an
ordinary (edit) session, is not built as one giant workflow. The planner calls this
instead: nothing changes, and the turn's reply carries ``offer: "plan"`` (a typed field
of the ``message`` frame) so the client can send the same message again with
``mode: "plan"`` (DESIGN §5a), where each process becomes its own workflow of the
project after the user reviews the plan.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from tools.base import ReadOutput, ToolArgs, ToolContext, ToolSpec
from tools.document import WorkflowDocument

OFFER: Final[Literal["plan"]] = "plan"
"""The mode the reply offers."""


class OfferPlanModeArgs(ToolArgs):
    """For a message describing several separate processes (each with its own trigger
    and steps), instead of building one workflow: offers the user plan mode (one
    workflow per process). Changes nothing. Not for one process with branches."""

    processes: list[Annotated[str, Field(min_length=1, max_length=120)]] = Field(
        min_length=2,
        max_length=30,
        description="Each process's name, in the message's order.",
    )


def offer_plan_mode(doc: WorkflowDocument, args: OfferPlanModeArgs, ctx: ToolContext) -> ReadOutput:
    del doc, ctx
    names = [" ".join(name.split()) for name in args.processes]
    listed = ", ".join(f'"{n}"' for n in names[:-1]) + f' and "{names[-1]}"'
    text = (
        f"This describes {len(names)} separate processes: {listed}. Built here they would "
        "become one long workflow, so nothing was changed. In plan mode each process becomes "
        "its own workflow of this project: you review the plan first, then they are built in "
        'order. Send the same message as a plan to do that (the web page\'s "Plan it" button, '
        "the terminal's /plan), or describe one process at a time to build it here."
    )
    return ReadOutput(text, {"offer": OFFER, "processes": names})


TOOL = ToolSpec(
    "offer_plan_mode",
    OfferPlanModeArgs,
    "read",
    offer_plan_mode,
    spinner="Reading the processes…",
    action="offer plan mode",
    offers=OFFER,
)
