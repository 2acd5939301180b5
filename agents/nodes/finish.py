"""The turn's last node: send the reply and add the exchange to the session history."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agents.events import MessageEvent
from agents.runtime import TurnRuntime
from agents.state import TurnState


def finish_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    text = state.get("final_text") or ""
    offer = state.get("offer")
    runtime.stream_writer(MessageEvent(text=text, offer="plan" if offer == "plan" else None))
    history = [
        *(state.get("history") or []),
        {"role": "user", "content": state["user_text"]},
        {"role": "assistant", "content": text},
    ]
    return {"history": history}
