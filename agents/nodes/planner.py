"""The planner node: one model round over the conversation of this turn.

The system prompt is static (cached by the provider); the structure, page,
mode, errors and the last failed test run go in the turn's first user message.
When the tool budget is spent the round runs with ``tool_choice: none`` so the
model summarises.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agents.conversation import Conversation, earlier_turns
from agents.events import DeltaEvent
from agents.models.base import ModelRequest, RequestContext
from agents.nodes.route import page_context
from agents.nodes.stop_reasons import ask_planner, stop_text
from agents.runtime import TurnRuntime
from agents.state import TurnState
from prompts.delimiters import fence
from tools.document.redaction import redact, render_structure
from tools.registry import tool_definitions

BUDGET_SPENT_NOTE = (
    "The tool budget for this turn is spent: make no more tool calls. Tell the user briefly "
    "what changed and what is still left to do."
)


def first_message(state: TurnState, rt: TurnRuntime) -> dict[str, Any]:
    """The turn's own material after the earlier turns: the structure, the page, the
    mode, errors and the last failed run, and the user's message."""
    doc = rt.document(state["yaml"], state["version"])
    errors = state.get("errors")
    errors_block = (
        "# Validation errors to fix\n\nThe editor reports that the workflow is invalid:\n"
        f"{errors}\nChange the workflow so that these errors go away."
        if errors
        else ""
    )
    last_run = state.get("last_run")
    if last_run:
        # Step names, errors and the sample come from the user's workflow and data: fenced.
        run_block = (
            "# The last test run failed\n\nThe session's last test run of this workflow "
            f"failed:\n<last_run>\n{fence(last_run, 'last_run')}\n</last_run>\nIf the user "
            "asks to fix it, change the workflow or that step's code so this run would succeed."
        )
        errors_block = f"{errors_block}\n\n{run_block}" if errors_block else run_block
    mode = (
        "read-only: answer only, make no changes"
        if state.get("read_only")
        else "editing: you may change the workflow"
    )
    content = rt.prompt("planner_user").render(
        structure=render_structure(doc.structure),
        page_context=page_context(state),
        mode=mode,
        errors=errors_block,
        message=state["user_text"],
    )
    plan_context = state.get("plan_context")
    if plan_context:  # a plan turn building one of its workflows
        content = rt.prompt("plan_build").render(plan=plan_context) + "\n\n" + content
    return {"role": "user", "content": content}


async def conversation(state: TurnState, rt: TurnRuntime) -> Conversation:
    return await earlier_turns(state.get("history"), rt.config.history_token_budget, rt.tokens)


FEEDBACK_NOTE = "The user answered the confirmation with these words:"


def _with_feedback(messages: list[dict[str, Any]], feedback: str | None) -> list[dict[str, Any]]:
    """The conversation with the user's words on a confirmation added to the round's
    tool results (the last user message), fenced like any user text."""
    if not feedback or not messages or messages[-1]["role"] != "user":
        return messages
    last = messages[-1]
    blocks = last["content"] if isinstance(last["content"], list) else [last["content"]]
    text = f"{FEEDBACK_NOTE}\n<user_feedback>\n{fence(feedback, 'user_feedback')}\n</user_feedback>"
    return [*messages[:-1], {**last, "content": [*blocks, {"type": "text", "text": text}]}]


async def planner_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    rt = runtime.context
    doc = rt.document(state["yaml"], state["version"])
    earlier = await conversation(state, rt)
    messages = list(state.get("messages") or [*earlier.messages, first_message(state, rt)])
    # Where the earlier turns end, also in later rounds (they are never changed).
    history_count = int(state.get("history_messages", len(earlier.messages)))
    messages = _with_feedback(messages, state.get("confirmation_feedback"))
    budget_spent = state.get("tool_calls", 0) >= rt.config.max_tool_calls
    if budget_spent:
        last = messages[-1]
        blocks = last["content"] if isinstance(last["content"], list) else [last["content"]]
        messages[-1] = {**last, "content": [*blocks, {"type": "text", "text": BUDGET_SPENT_NOTE}]}
    prompt = rt.prompt("planner")

    async def on_text(chunk: str) -> None:
        runtime.stream_writer(DeltaEvent(text=chunk))

    request = ModelRequest(
        role="planner",
        system=prompt.render(adaptors=rt.adaptor_list),
        messages=messages,
        tools=tool_definitions(read_only=bool(state.get("read_only"))),
        tool_choice={"type": "none"} if budget_spent else {"type": "auto"},
        max_tokens=rt.config.max_tokens,
        context=RequestContext(
            user_text=state["user_text"],
            structure=redact(doc.structure),
            page=state.get("page") or "workflow",
            job_key=state.get("job_key"),
            read_only=bool(state.get("read_only")),
            errors=state.get("errors"),
            last_run=state.get("last_run"),
            history=earlier.history,
            now=rt.clock(),
        ),
        prompt_name=prompt.name,
        prompt_version=prompt.version,
        prompt_hash=prompt.hash,
        history_messages=history_count,
    )
    response = await ask_planner(rt, request, on_text)
    pending = [] if budget_spent else response.tool_uses
    final = stop_text(response, budget_spent=budget_spent, changed=bool(state.get("changes")))
    if final is not None:
        # Nothing of a cut-off or refused reply runs; keep only its text in the conversation.
        text_only = [b for b in response.content if b.get("type") == "text" and b.get("text")]
        if text_only:
            messages.append({"role": "assistant", "content": text_only})
        return {
            "messages": messages,
            "history_messages": history_count,
            "pending": [],
            "final_text": final,
            "confirmation_feedback": None,
        }
    messages.append({"role": "assistant", "content": response.content})
    update: dict[str, Any] = {
        "messages": messages,
        "history_messages": history_count,
        "pending": pending,
        "confirmation_feedback": None,
    }
    if not pending:
        text = response.text.strip()
        if not text and budget_spent:
            text = "I reached the limit of changes for one turn; ask me to continue."
        update["final_text"] = text
    return update
