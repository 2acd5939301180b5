from __future__ import annotations

from agents.models import ScriptedModel
from tests.agents.helpers import resume, run

S = ScriptedModel


async def test_pending_confirmation_is_readable_until_answered() -> None:
    model = ScriptedModel([S.tool_calls(("remove_jobs", {"keys": ["fetch"]})), S.text("Removed.")])
    paused = await run(model, "remove fetch")
    pending = await paused.runner.pending_confirmation("turn-1")
    assert pending == {
        "request_id": paused.last["request_id"],
        "question": paused.last["question"],
    }
    await resume(paused, approved=True)
    assert await paused.runner.pending_confirmation("turn-1") is None
