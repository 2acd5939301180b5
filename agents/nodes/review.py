"""Review mode's end of a turn: propose the draft, pause, apply what was accepted.

``propose`` turns the draft (``state["draft"]``, one entry per change) into the
proposal: the draft YAML, a unified diff against the base and each change with its
impact. ``review`` pauses on it with ``interrupt`` (a checkpoint: any device, worker
or restart can answer) and, resumed with what the accepted changes made of the head
(the service replays them, :func:`agents.review.replay`), commits that as one version.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agents.events import workflow_event
from agents.review import REVIEW_TOOL, outcome_text, proposal_changes, unified_diff
from agents.runtime import Commit, TurnRuntime, commit_change
from agents.state import TurnState
from tools.document.structure import Change


def review_request_id(turn_id: str) -> str:
    return f"review-{turn_id}"


async def propose_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    rt = runtime.context
    draft = state.get("draft") or []
    base_yaml, base_version = state["base_yaml"], state["base_version"]
    proposed = proposal_changes(base_yaml, draft, rt.tools, max_bytes=rt.config.max_yaml_bytes)
    said = (state.get("final_text") or "").strip()
    question = proposed.question  # says only what the impacts say
    return {
        "proposal": {
            "request_id": review_request_id(state.get("turn_id", "")),
            "question": f"{said}\n\n{question}" if said else question,
            "proposal": {
                "base_version": base_version,
                "yaml": state["yaml"],
                "diff": unified_diff(base_yaml, state["yaml"], base_version),
                "changes": proposed.changes,
            },
        }
    }


async def review_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    """Pause on the proposal. The service resumes it with what the answer applied:
    ``{accepted, applied, yaml, name, changes, head_version}`` (:func:`agents.review.replay`
    run on its parsed head, kept live in the runtime), and this commits it as one
    version; with nothing accepted, nothing is committed."""
    rt, emit = runtime.context, runtime.stream_writer
    answer = interrupt(state["proposal"])
    applied = [str(i) for i in answer.get("applied") or []]
    head_version = int(answer["head_version"])
    draft = state.get("draft") or []
    said = (state.get("final_text") or "").strip()
    update: dict[str, Any] = {"version": head_version, "changes": []}
    if applied:
        yaml: str = answer["yaml"]
        changes = [Change(**c) for c in answer.get("changes") or []]
        live = rt.live_document()
        version = await commit_change(
            rt.committer,
            Commit(
                yaml=yaml,
                name=answer.get("name"),
                base_version=head_version,
                tool=REVIEW_TOOL,
                changes=changes,
                summary=outcome_text(draft, applied, head_version + 1),
                turn_id=state.get("turn_id", ""),
            ),
        )
        if live is not None:
            rt.adopt(live[0], version)
        emit(workflow_event(yaml, version, changes))
        update |= {"yaml": yaml, "version": version, "changes": [c.as_dict() for c in changes]}
        outcome = outcome_text(draft, applied, version)
    else:
        update["yaml"] = answer["yaml"]  # the head, unchanged
        outcome = outcome_text(draft, [], head_version)
    # The reply (and so the planner's history) says what was and was not applied.
    update["final_text"] = f"{said}\n\n{outcome}" if said else outcome
    return update
