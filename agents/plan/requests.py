"""What the build of one planned workflow is asked (DESIGN §5a.3).

After the user approves a plan, each workflow is built by an ordinary planner run
on an empty document. :func:`build_request` is that run's user text: a build
request the offline SOP reader (:mod:`agents.offline.sop`) turns into the
workflow the plan describes -- its name, its trigger, its steps in order -- and
that reads as a plain instruction to Claude too. :func:`plan_context` is the whole
plan in a few lines, for the Claude path's prompt: the workflow being built, what
it receives and from whom, and what it hands on.

Hand-off steps (posting a result to a dependent's webhook) are not asked for here:
they are added deterministically after the build (``tools.plan.handoff``).
"""

from __future__ import annotations

import re

from tools.plan import Contract, PlannedWorkflow, ProjectPlan

# A step said as one sentence: a trailing full stop would end the numbered line twice.
_END = re.compile(r"[\s.]+$")


def build_request(item: PlannedWorkflow, plan: ProjectPlan) -> str:
    """The user text that builds ``item`` on an empty document.

    The name is quoted so that commas or colons in it stay part of it; the trigger is
    its own "Trigger:"/"Schedule:" line, which the SOP reader reads as the trigger and
    never as a step; each step is one numbered line, as the plan lists them."""
    del plan  # The request is about one workflow; the rest of the plan is context.
    name = item.name.replace('"', "'")
    if item.trigger.type == "cron" and item.trigger.cron_expression:
        trigger = f"Schedule: cron {item.trigger.cron_expression}"
    else:
        trigger = "Trigger: webhook"
    steps = [f"{n}. {_END.sub('', step)}" for n, step in enumerate(item.steps, start=1)]
    return "\n".join([f'Create a workflow called "{name}":', trigger, *steps])


def plan_context(plan: ProjectPlan, item: PlannedWorkflow, contracts: list[Contract]) -> str:
    """The whole plan, compactly, with ``item`` (the workflow being built) marked."""
    by_key = plan.by_key()
    lines = [f"Project plan: {plan.summary}", "Workflows, in build order:"]
    for n, key in enumerate(plan.order, start=1):
        workflow = by_key.get(key)
        if workflow is None:
            continue
        marker = " <- building now" if key == item.key else ""
        lines.append(
            f"{n}. {workflow.name} ({key}): {workflow.purpose} [{_trigger(workflow)}]{marker}"
        )
    receives = [c for c in contracts if c.target == item.key]
    hands = [c for c in contracts if c.source == item.key]
    lines.append(f"This run builds {item.name} ({item.key}) only.")
    for contract in receives:
        source = by_key.get(contract.source)
        if contract.via == "review":
            lines.append(
                f"It starts on the {contract.reviewer}'s decision about what "
                f"{source.name if source else contract.source} sends for review, on its webhook "
                f"(path {contract.webhook_path}); the decision step and its branches are added "
                "after the build: build only what happens once the case is approved."
            )
            continue
        lines.append(
            f"It receives {_data(contract)} from {source.name if source else contract.source} "
            f"on its webhook (path {contract.webhook_path})."
        )
    for contract in hands:
        target = by_key.get(contract.target)
        if contract.via == "review":
            lines.append(
                f"When it finishes the {contract.reviewer} reviews its result (the step that "
                "sends it for review is added after the build; do not add one)."
            )
            continue
        lines.append(
            f"When it finishes it hands {_data(contract)} to "
            f"{target.name if target else contract.target} (a hand-off step is added after the "
            "build; do not add one)."
        )
    if item.inputs and not receives:
        lines.append("Its inputs: " + ", ".join(item.inputs) + ".")
    return "\n".join(lines)


def _trigger(workflow: PlannedWorkflow) -> str:
    if workflow.depends_on:
        return "webhook, after " + ", ".join(workflow.depends_on)
    if workflow.trigger.type == "cron":
        return f"cron {workflow.trigger.cron_expression}"
    return "webhook"


def _data(contract: Contract) -> str:
    return ", ".join(contract.data) if contract.data else "its result"
