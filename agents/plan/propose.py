"""Proposing a plan: the planner calls ``propose_plan``, the plan is checked, stored
and handed to review (DESIGN §5a.1-2, .5).

Every proposal starts from the session's earlier turns (the same trimmed history
every mode sends, ``agents.conversation``) and then one user message with the spec
(or, when revising, the plan under review and the user's feedback), so a revision
never depends on tool traffic of earlier proposals. A plan that does not hold
goes back to the model as an error result naming each problem, a few times at
most; a reply without a plan is the turn's answer and changes nothing. Feedback the
planner does not act on leaves the plan under review: it is asked about again under a
new request id (every question is its own confirmation), after a message saying what
the planner made of the feedback.
"""

from __future__ import annotations

import json
from typing import Any

from langgraph.runtime import Runtime

from agents.conversation import earlier_turns
from agents.events import DeltaEvent, MessageEvent
from agents.models.base import ModelRequest, RequestContext
from agents.nodes.stop_reasons import ask_planner, stop_text
from agents.plan.runtime import PlanRuntime
from agents.plan.state import PlanState
from tools.plan import PlanRecord, ProjectPlan, plan_delta
from tools.plan.model import Contract
from tools.plan.record import PlannedOutcome
from tools.plan.tool import plan_tool_definitions, run_propose_plan

MAX_ATTEMPTS = 3
READ_ONLY = (
    "This session is read-only: I can answer questions about the project, but I cannot "
    "propose or build a plan here. Nothing was changed."
)
NO_CHANGE = (
    "The spec matches the plan this project was built from, so there is nothing to change. "
    "Nothing was rebuilt."
)
UNCHANGED_PLAN = "The plan is unchanged: approve it, adjust it, or reject it."
BACK_TO_BUILT = (
    "With that feedback the plan is the one this project was built from, so there is "
    "nothing to change. Nothing was rebuilt."
)
NOT_CHECKED = "I could not put together a plan that holds, so nothing was proposed: "


def _record(state: PlanState) -> PlanRecord | None:
    raw = state.get("record")
    return None if raw is None else PlanRecord.model_validate(raw)


def _project_view(state: PlanState, base: ProjectPlan | None, revising: bool) -> dict[str, Any]:
    return {
        **state.get("project", {}),
        "plan": None if base is None else base.model_dump(mode="json"),
        "revising": revising,
    }


def _user_message(rt: PlanRuntime, state: PlanState, project: dict[str, Any], text: str) -> str:
    workflows = project.get("workflows") or []
    described = "\n".join(f"- {w.get('name')}" for w in workflows) or "(no workflows yet)"
    plan = project.get("plan")
    if project.get("revising"):
        mode = (
            "Revise the plan under review by the user's feedback (their message below) and "
            "propose the whole revised plan."
        )
    elif state.get("mode") == "plan":
        mode = "The user asked for a plan: propose one for the spec below."
    else:
        mode = "Propose a plan if the message describes processes to build; else answer it."
    return rt.prompt("project_planner_user").render(
        project=f"Name: {project.get('name')}\nWorkflows:\n{described}",
        plan=json.dumps(plan, indent=1) if plan else "(none yet)",
        mode=mode,
        message=text,
    )


async def propose_node(state: PlanState, runtime: Runtime[PlanRuntime]) -> dict[str, Any]:
    rt = runtime.context
    if state.get("read_only"):
        return {"proposal": None, "final_text": READ_ONLY}
    record = _record(state)
    revising = state.get("decision") == "revise"
    under_review = ProjectPlan.model_validate(state["proposal"]) if revising else None
    built = record.built_plan if record is not None else None
    project = _project_view(state, under_review or built, revising)
    text = (state.get("feedback") or "") if revising else state["user_text"]
    earlier = await earlier_turns(state.get("history"), rt.config.history_token_budget, rt.tokens)
    messages: list[dict[str, Any]] = [
        *earlier.messages,
        {"role": "user", "content": _user_message(rt, state, project, text)},
    ]
    prompt = rt.prompt("project_planner")

    async def on_text(chunk: str) -> None:
        runtime.stream_writer(DeltaEvent(text=chunk))

    problems = ""
    for _ in range(MAX_ATTEMPTS):
        request = ModelRequest(
            role="planner",
            system=prompt.render(),
            messages=messages,
            tools=plan_tool_definitions(),
            tool_choice={"type": "auto"},
            max_tokens=rt.config.max_tokens,
            context=RequestContext(
                user_text=text, history=earlier.history, project=project, now=rt.clock()
            ),
            prompt_name=prompt.name,
            prompt_version=prompt.version,
            prompt_hash=prompt.hash,
            history_messages=len(earlier.messages),
        )
        response = await ask_planner(rt, request, on_text)
        stopped = stop_text(response, budget_spent=False, changed=False)
        uses = response.tool_uses
        if stopped is not None or not uses:
            answer = stopped or response.text.strip()
            if revising:  # feedback not acted on: the same plan stays under review
                return await _unchanged(rt, runtime, state, record, answer)
            return {"proposal": None, "final_text": answer}
        use = uses[0]
        result = run_propose_plan(use["input"], project_slug=str(project.get("slug") or ""))
        if result.ok and result.data is not None:
            return await _proposed(rt, state, record, result.data)
        problems = result.text
        messages += [
            {"role": "assistant", "content": response.content},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": u["id"],
                        "content": problems if u is use else "Only one plan at a time.",
                        "is_error": True,
                    }
                    for u in uses
                ],
            },
        ]
    if revising:
        return await _unchanged(rt, runtime, state, record, NOT_CHECKED + problems)
    return {"proposal": None, "final_text": NOT_CHECKED + problems + " Nothing was changed."}


async def _proposed(
    rt: PlanRuntime, state: PlanState, record: PlanRecord | None, data: dict[str, Any]
) -> dict[str, Any]:
    plan = ProjectPlan.model_validate(data["plan"])
    found = [Contract.model_validate(c) for c in data["contracts"]]
    built = record.built_plan if record is not None else None
    delta = plan_delta(built, plan) if built is not None else None
    if delta is not None and delta.empty:
        if state.get("decision") == "revise" and record is not None:
            # Feedback took the plan under review back to the built one: that proposal
            # is withdrawn, not left waiting for an answer nothing can give.
            withdrawn = record.model_copy(update={"status": "rejected", "request_id": None})
            await rt.workspace.save_plan(withdrawn)
            return {
                "proposal": None,
                "record": withdrawn.model_dump(mode="json"),
                "request_id": None,
                "final_text": BACK_TO_BUILT,
            }
        return {"proposal": None, "final_text": NO_CHANGE}
    revision = (record.revision + 1) if record is not None else 1
    request_id = f"plan-{state['turn_id']}-{revision}"
    kept = record.workflows if record is not None else {}
    outcomes = {
        w.key: kept.get(w.key, PlannedOutcome()).model_copy(deep=True) for w in plan.workflows
    }
    saved = PlanRecord(
        status="proposed",
        plan=plan,
        contracts=found,
        workflows=outcomes,
        revision=revision,
        turn_id=state["turn_id"],
        request_id=request_id,
        delta=delta,
        built_plan=built,
    )
    # Stored before the review frame goes out: a reload anywhere shows this plan.
    await rt.workspace.save_plan(saved)
    return {
        "proposal": plan.model_dump(mode="json"),
        "contracts": [c.model_dump(mode="json") for c in found],
        "delta": None if delta is None else delta.model_dump(mode="json"),
        "revision": revision,
        "request_id": request_id,
        "record": saved.model_dump(mode="json"),
        "asked": 1,
        "decision": None,
        "notice": None,
    }


async def _unchanged(
    rt: PlanRuntime,
    runtime: Runtime[PlanRuntime],
    state: PlanState,
    record: PlanRecord | None,
    said: str,
) -> dict[str, Any]:
    """Feedback the planner did not act on: the same plan goes back to review, with what
    the planner said about the feedback as a message and as the question's lead.

    The review is asked again under a new request id: the answered confirmation keeps
    its answer and feedback, and an answer to it is never taken for one to this."""
    notice = said.strip() or UNCHANGED_PLAN
    asked = int(state.get("asked") or 1) + 1
    request_id = f"plan-{state['turn_id']}-{state.get('revision', 1)}-{asked}"
    update: dict[str, Any] = {
        "decision": None,
        "notice": notice,
        "asked": asked,
        "request_id": request_id,
    }
    if record is not None:
        kept = record.model_copy(update={"request_id": request_id})
        # Stored before the review frame goes out, like a new proposal.
        await rt.workspace.save_plan(kept)
        update["record"] = kept.model_dump(mode="json")
    runtime.stream_writer(MessageEvent(text=notice))
    return update
