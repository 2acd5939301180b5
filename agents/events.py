"""Typed events a turn emits through LangGraph's custom stream.

The graph never touches a socket: nodes write these dicts with the run's
stream writer, and the service turns them into WebSocket frames (adding
``seq`` and ``turn_id``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from tools.document.structure import Change

Event = dict[str, Any]


def route_event(destination: str) -> Event:
    return {"type": "route", "destination": destination}


def status_event(phase: Literal["spinner", "settled"], tool: str, text: str) -> Event:
    return {"type": "status", "phase": phase, "tool": tool, "text": text}


def workflow_event(
    yaml: str,
    version: int,
    changes: Sequence[Change],
    *,
    workflow_id: str | None = None,
    turn_id: str | None = None,
) -> Event:
    """A committed version of the document: the graph's event and the bus/wire frame."""
    event: Event = {
        "type": "workflow",
        "version": version,
        "yaml": yaml,
        "changes": [c.as_dict() for c in changes],
    }
    if workflow_id is not None:
        event["workflow_id"] = workflow_id
    if turn_id is not None:
        event["turn_id"] = turn_id
    return event


def delta_event(text: str) -> Event:
    return {"type": "message.delta", "text": text}


def message_event(text: str) -> Event:
    return {"type": "message", "text": text}


def confirm_event(request_id: str, question: str) -> Event:
    return {"type": "confirm.required", "request_id": request_id, "question": question}
