from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tools.base import ToolContext, ToolSpec
from tools.document.structure import Draft, Structure, Trigger
from tools.edits.primitives import set_trigger as apply_trigger
from tools.edits.specs import TriggerSpec

RESPONSE_SETTINGS = ("webhook_reply", "webhook_response_config")
"""How a webhook answers its caller: switching the trigger to another type drops them."""


class SetTriggerArgs(TriggerSpec):
    """Create or replace the trigger (webhook or cron). Replacing keeps its edge and its
    webhook settings unless given; a webhook switched to cron loses its response
    settings (the user is asked first). New triggers start disabled."""


def set_trigger(draft: Draft, args: SetTriggerArgs, ctx: ToolContext) -> str:
    return "Set " + apply_trigger(draft, args, ctx) + "."


def _replaced(structure: Structure, item: Mapping[str, Any]) -> Trigger | None:
    """The trigger a call would replace (as ``set_trigger`` picks it), or None."""
    key = item.get("key")
    if isinstance(key, str) and key in structure.triggers:
        return structure.triggers[key]
    if len(structure.triggers) == 1:
        return next(iter(structure.triggers.values()))
    return None  # a new trigger, or an ambiguous call the tool itself refuses


def response_settings_to_confirm(
    structure: Structure, inputs: Sequence[Mapping[str, Any]]
) -> str | None:
    """What the round's trigger changes would drop of a webhook's response settings.

    Seed 003's rule: ``webhook_reply`` and ``webhook_response_config`` are kept unless
    passed; switching the webhook to another type loses them, which must not happen
    silently. Each item is one ``set_trigger`` input (a trigger spec).
    """
    lost: list[str] = []
    for item in inputs:
        current = _replaced(structure, item)
        new_type = item.get("type")
        if current is None or current.type != "webhook" or new_type in (None, "webhook"):
            continue
        settings = [name for name in RESPONSE_SETTINGS if getattr(current, name) is not None]
        if settings:
            lost.append(
                f"switch the webhook trigger {current.key!r} to {new_type}, dropping its "
                "response settings (" + ", ".join(settings) + ")"
            )
    return "; ".join(dict.fromkeys(lost)) or None


TOOL = ToolSpec(
    "set_trigger",
    SetTriggerArgs,
    "structural",
    set_trigger,
    spinner="Setting the trigger…",
    action="change the trigger",
    confirm=response_settings_to_confirm,
    impact=True,
)
