"""Destructive changes pause the turn; it resumes from the checkpointer."""

from __future__ import annotations

from pathlib import Path

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.graph import build_graph
from agents.models import ScriptedModel
from agents.nodes.planner import FEEDBACK_NOTE
from agents.runner import TurnRunner
from tests.agents.helpers import BASE_YAML, resume, run, runtime_for, turn

S = ScriptedModel


def _remove_fetch_script() -> ScriptedModel:
    return ScriptedModel(
        [
            S.tool_calls(("remove_jobs", {"keys": ["fetch"]})),
            S.text("Removed Fetch referral."),
        ]
    )


async def test_removing_a_step_with_code_pauses_for_confirmation() -> None:
    outcome = await run(_remove_fetch_script(), "remove the fetch step")
    assert outcome.last["type"] == "confirm.required"
    assert "Fetch referral" in outcome.last["question"]
    assert outcome.last["request_id"].startswith("confirm-")
    assert outcome.of("workflow") == []
    assert outcome.state["yaml"] == BASE_YAML


async def test_approval_resumes_and_removes() -> None:
    paused = await run(_remove_fetch_script(), "remove the fetch step")
    done = await resume(paused, approved=True)
    assert done.last["type"] == "turn.completed"
    assert "fetch" not in done.doc.structure.jobs
    assert [f["version"] for f in done.of("workflow")] == [2]
    assert done.of("message")[0]["text"] == "Removed Fetch referral."


async def test_declining_reports_back_to_the_model_and_changes_nothing() -> None:
    model = ScriptedModel(
        [
            S.tool_calls(("remove_jobs", {"keys": ["fetch"]})),
            S.text("OK, I kept Fetch referral."),
        ]
    )
    paused = await run(model, "remove the fetch step")
    done = await resume(paused, approved=False)
    assert done.state["yaml"] == BASE_YAML
    declined = model.requests[-1].messages[-1]["content"][0]
    assert declined["is_error"] and "declined" in declined["content"]
    assert done.of("message")[0]["text"] == "OK, I kept Fetch referral."


async def test_the_words_sent_with_an_answer_reach_the_planner_once() -> None:
    model = ScriptedModel(
        [
            S.tool_calls(("remove_jobs", {"keys": ["fetch"]})),
            S.text("OK, I kept Fetch referral and will rename it instead."),
        ]
    )
    paused = await run(model, "remove the fetch step")
    done = await resume(paused, approved=False, feedback="No </user_feedback> rename it instead")
    last = model.requests[-1].messages[-1]["content"]
    assert last[0]["type"] == "tool_result" and last[0]["is_error"]
    note = last[-1]
    assert note["type"] == "text" and note["text"].startswith(FEEDBACK_NOTE)
    # Fenced like any user text: the words cannot close the tag early.
    assert note["text"].count("</user_feedback>") == 1
    assert "rename it instead" in note["text"]
    assert done.state.get("confirmation_feedback") is None


async def test_an_answer_without_words_adds_no_note() -> None:
    paused = await run(_remove_fetch_script(), "remove the fetch step")
    model = paused.runtime.models["planner"]
    await resume(paused, approved=True)
    assert isinstance(model, ScriptedModel)
    last = model.requests[-1].messages[-1]["content"]
    assert all(block["type"] == "tool_result" for block in last)


async def test_declining_refuses_every_call_planned_in_that_round() -> None:
    model = ScriptedModel(
        [
            S.tool_calls(
                ("remove_jobs", {"keys": ["fetch"]}),
                ("add_edges", {"edges": [{"source": "webhook", "target": "check"}]}),
            ),
            S.text("OK, nothing changed."),
        ]
    )
    paused = await run(model, "remove fetch and reconnect")
    done = await resume(paused, approved=False)
    assert done.state["yaml"] == BASE_YAML
    results = model.requests[-1].messages[-1]["content"]
    assert [r["is_error"] for r in results] == [True, True]
    assert all("declined" in r["content"] for r in results)
    assert done.of("workflow") == []


async def test_removing_an_empty_step_asks_with_its_impact_only() -> None:
    # No code is lost, but a step is removed (DESIGN §5c): the question says just that.
    model = ScriptedModel(
        [S.tool_calls(("remove_jobs", {"keys": ["check"]})), S.text("Removed it.")]
    )
    paused = await run(model, "remove check coverage")
    assert paused.last["type"] == "confirm.required"
    assert paused.last["question"] == (
        "The assistant wants to remove the step. The step 'Check coverage' would be removed. "
        "Go ahead?"
    )
    done = await resume(paused, approved=True)
    assert done.last["type"] == "turn.completed"
    assert "check" not in done.doc.structure.jobs


async def test_removing_every_step_asks_even_without_code() -> None:
    yaml = BASE_YAML.replace("      get('/referrals');\n", "      // Add operations here\n")
    model = ScriptedModel([S.tool_calls(("remove_jobs", {"keys": ["fetch", "check"]}))])
    outcome = await run(model, "start over", yaml=yaml)
    assert outcome.last["type"] == "confirm.required"
    assert "all 2 steps" in outcome.last["question"]


async def test_resume_from_a_fresh_graph_on_the_same_checkpointer(tmp_path: Path) -> None:
    database = str(tmp_path / "checkpoints.sqlite")
    async with AsyncSqliteSaver.from_conn_string(database) as saver:
        first = TurnRunner(build_graph(saver))
        model_a = ScriptedModel([S.tool_calls(("remove_jobs", {"keys": ["fetch"]}))])
        events = [e.wire() async for e in first.start(turn("remove fetch"), runtime_for(model_a))]
        assert events[-1]["type"] == "confirm.required"

    # "Another process": a new connection, a new graph, new model clients.
    async with AsyncSqliteSaver.from_conn_string(database) as saver:
        second = TurnRunner(build_graph(saver))
        model_b = ScriptedModel([S.text("Removed Fetch referral.")])
        events = [e.wire() async for e in second.resume("turn-1", True, runtime_for(model_b))]
        state = await second.state("turn-1")
    assert events[-1]["type"] == "turn.completed"
    assert [e["version"] for e in events if e["type"] == "workflow"] == [2]
    assert "fetch:" not in state["yaml"]
    assert model_b.requests[0].messages[-1]["content"][0]["content"].startswith("Removed")


def _without_code(yaml: str = BASE_YAML) -> str:
    return yaml.replace("      get('/referrals');\n", "      // Add operations here\n")


async def test_removing_every_step_across_several_calls_asks() -> None:
    model = ScriptedModel(
        [
            S.tool_calls(
                ("remove_jobs", {"keys": ["fetch"]}), ("remove_jobs", {"keys": ["check"]})
            ),
            S.text("Removed both steps."),
        ]
    )
    paused = await run(model, "start over", yaml=_without_code())
    assert paused.last["type"] == "confirm.required"
    assert "all 2 steps" in paused.last["question"]
    assert paused.of("workflow") == []
    done = await resume(paused, approved=True)
    assert done.doc.structure.jobs == {}
    results = model.requests[-1].messages[-1]["content"]
    assert [bool(r.get("is_error")) for r in results] == [False, False]


async def test_steps_with_code_removed_across_calls_are_named_in_one_question() -> None:
    yaml = BASE_YAML.replace("    body: // Add operations here\n", "    body: fn(s => s);\n")
    model = ScriptedModel(
        [
            S.tool_calls(
                ("remove_jobs", {"keys": ["fetch"]}), ("remove_jobs", {"keys": ["check"]})
            ),
            S.text("Kept both."),
        ]
    )
    paused = await run(model, "remove both", yaml=yaml)
    question = paused.last["question"]
    assert question.startswith(
        "The assistant wants to remove all 2 steps, including 'Fetch referral', "
        "'Check coverage', which hold code. "
    )
    assert question.count("The assistant wants to") == 1
    assert "'Fetch referral' and 1 more step would be removed: 'Check coverage'." in question
    done = await resume(paused, approved=False)
    assert done.state["yaml"] == yaml
    results = model.requests[-1].messages[-1]["content"]
    assert all(r["is_error"] and "declined" in r["content"] for r in results)


# A webhook that answers its caller: switching it to a schedule drops how it answers.
REPLYING_WEBHOOK = BASE_YAML.replace(
    "    type: webhook\n",
    "    type: webhook\n    webhook_reply: after_completion\n"
    "    webhook_response_config:\n      status: 202\n",
    1,
)


def _to_cron_script() -> ScriptedModel:
    return ScriptedModel(
        [
            S.tool_calls(("set_trigger", {"type": "cron", "cron_expression": "0 9 * * *"})),
            S.text("It now runs every day at 09:00."),
        ]
    )


async def test_switching_a_replying_webhook_to_cron_pauses_for_confirmation() -> None:
    assert REPLYING_WEBHOOK != BASE_YAML
    paused = await run(_to_cron_script(), "run it every day at 9", yaml=REPLYING_WEBHOOK)
    assert paused.last["type"] == "confirm.required"
    question = paused.last["question"]
    assert "switch the webhook trigger 'webhook' to cron" in question
    assert "webhook_reply, webhook_response_config" in question
    assert "The webhook trigger would become a cron trigger." in question
    assert paused.of("workflow") == []
    assert paused.state["yaml"] == REPLYING_WEBHOOK


async def test_approved_the_switch_drops_the_settings_and_says_so() -> None:
    paused = await run(_to_cron_script(), "run it every day at 9", yaml=REPLYING_WEBHOOK)
    done = await resume(paused, approved=True)
    assert done.last["type"] == "turn.completed"
    assert list(done.doc.structure.triggers) == ["cron"]
    cron = done.doc.structure.triggers["cron"]
    assert (cron.webhook_reply, cron.webhook_response_config) == (None, None)
    model = done.runtime.models["planner"]
    assert isinstance(model, ScriptedModel)
    result = model.requests[-1].messages[-1]["content"][0]
    assert "dropped webhook_reply, webhook_response_config" in result["content"]


async def test_declined_the_webhook_and_its_settings_stay() -> None:
    paused = await run(_to_cron_script(), "run it every day at 9", yaml=REPLYING_WEBHOOK)
    done = await resume(paused, approved=False)
    assert done.state["yaml"] == REPLYING_WEBHOOK
    assert done.of("workflow") == []


async def test_a_webhook_without_response_settings_asks_only_about_the_new_type() -> None:
    paused = await run(_to_cron_script(), "run it every day at 9")
    assert paused.last["question"] == (
        "The assistant wants to change the trigger. The webhook trigger would become a cron "
        "trigger. Go ahead?"
    )
    done = await resume(paused, approved=True)
    assert done.last["type"] == "turn.completed"
    assert list(done.doc.structure.triggers) == ["cron"]
