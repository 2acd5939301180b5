from __future__ import annotations

from tools.base import ToolContext, ToolSpec
from tools.document.structure import Draft
from tools.edits.primitives import set_trigger as apply_trigger
from tools.edits.specs import TriggerSpec


class SetTriggerArgs(TriggerSpec):
    """Create or replace the workflow's trigger (webhook or cron schedule). Replacing keeps
    the trigger's edge and its webhook settings unless they are passed. New triggers
    start disabled unless enabled is given."""


def set_trigger(draft: Draft, args: SetTriggerArgs, ctx: ToolContext) -> str:
    return "Set " + apply_trigger(draft, args, ctx) + "."


TOOL = ToolSpec(
    "set_trigger",
    SetTriggerArgs,
    "structural",
    set_trigger,
    spinner="Setting the trigger…",
    action="change the trigger",
)
