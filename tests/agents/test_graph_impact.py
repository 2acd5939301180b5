"""Confirmation by impact (DESIGN §5c): a round that would change what runs asks first,
naming what; review mode and read-only sessions never pause for it."""

from __future__ import annotations

from agents.models import ScriptedModel
from tests.agents.helpers import BASE_YAML, resume, run

S = ScriptedModel

# webhook -> fetch -> check -> notify -> archive; fetch fails -> alert. No code anywhere.
_JOBS = """\
  notify:
    id: 00000000-0000-4000-8000-000000000011
    name: Notify clinic
    adaptor: '@openfn/language-gmail@latest'
    body: // Add operations here
  archive:
    id: 00000000-0000-4000-8000-000000000012
    name: Archive referral
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
  alert:
    id: 00000000-0000-4000-8000-000000000013
    name: Alert staff
    adaptor: '@openfn/language-gmail@latest'
    body: // Add operations here
"""
_EDGES = """\
  check->notify:
    id: 00000000-0000-4000-8000-000000000021
    source_job: check
    target_job: notify
    condition_type: on_job_success
    enabled: true
  notify->archive:
    id: 00000000-0000-4000-8000-000000000022
    source_job: notify
    target_job: archive
    condition_type: on_job_success
    enabled: true
  fetch->alert:
    id: 00000000-0000-4000-8000-000000000023
    source_job: fetch
    target_job: alert
    condition_type: on_job_failure
    enabled: true
"""
LONG_YAML = (
    BASE_YAML.replace("      get('/referrals');\n", "      // Add operations here\n").replace(
        "triggers:\n", _JOBS + "triggers:\n", 1
    )
    + _EDGES
)


def _script(*calls: tuple[str, dict[str, object]]) -> ScriptedModel:
    return ScriptedModel([S.tool_calls(*calls), S.text("Done.")])


async def test_a_removal_that_orphans_steps_names_every_one_and_not_the_rest() -> None:
    paused = await run(
        _script(("remove_jobs", {"keys": ["check"]})), "remove the coverage check", yaml=LONG_YAML
    )
    assert paused.last["type"] == "confirm.required"
    assert paused.last["question"] == (
        "The assistant wants to remove the step. The step 'Check coverage' would be removed. "
        "'Notify clinic' and 1 more step would no longer run: 'Archive referral' (no trigger "
        "would reach them). Go ahead?"
    )
    assert paused.of("workflow") == []
    assert paused.state["yaml"] == LONG_YAML


async def test_declined_nothing_changes() -> None:
    paused = await run(
        _script(("remove_jobs", {"keys": ["check"]})), "remove check", yaml=LONG_YAML
    )
    done = await resume(paused, approved=False)
    assert done.state["yaml"] == LONG_YAML
    assert done.of("workflow") == []


async def test_a_removal_reconnected_in_the_same_round_asks_only_about_the_step() -> None:
    model = _script(
        ("remove_jobs", {"keys": ["check"]}),
        ("add_edges", {"edges": [{"source": "fetch", "target": "notify"}]}),
    )
    paused = await run(model, "remove check coverage", yaml=LONG_YAML)
    assert paused.last["question"] == (
        "The assistant wants to remove the step. The step 'Check coverage' would be removed. "
        "Go ahead?"
    )
    done = await resume(paused, approved=True)
    assert done.doc.structure.find_edge("fetch", "notify") is not None
    # The trial on a copy took none of the turn's ids: the new edge has the first one.
    assert done.doc.structure.edges["fetch->notify"].id == "00000000-0000-4000-8000-000000000100"


async def test_disconnecting_asks_with_the_connection_and_what_stops() -> None:
    model = _script(("remove_edges", {"edges": [{"source": "notify", "target": "archive"}]}))
    paused = await run(model, "disconnect notify from archive", yaml=LONG_YAML)
    assert paused.last["question"] == (
        "The assistant wants to disconnect the steps. 'Archive referral' would no longer run "
        "(no trigger would reach it). The connection from 'Notify clinic' to 'Archive referral' "
        "would be removed. Go ahead?"
    )


async def test_a_round_without_impact_does_not_ask() -> None:
    model = _script(
        ("add_jobs", {"jobs": [{"name": "Dedupe", "adaptor": "common"}]}),
        (
            "update_edges",
            {"edges": [{"source": "fetch", "target": "check", "new_target": "dedupe"}]},
        ),
        ("add_edges", {"edges": [{"source": "dedupe", "target": "check"}]}),
    )
    done = await run(model, "add a dedupe step after fetch", yaml=LONG_YAML)
    assert done.of("confirm.required") == []
    assert done.last["type"] == "turn.completed"
    assert done.doc.structure.find_edge("dedupe", "check") is not None


async def test_review_mode_never_pauses_here() -> None:
    # Code would be lost and steps orphaned: in review mode the proposal is the question.
    model = _script(("remove_jobs", {"keys": ["fetch"]}))
    outcome = await run(model, "remove fetch", review=True)
    assert outcome.of("confirm.required") == []


async def test_a_read_only_session_never_asks() -> None:
    model = _script(("remove_jobs", {"keys": ["check"]}))
    outcome = await run(model, "remove check", yaml=LONG_YAML, read_only=True)
    assert outcome.of("confirm.required") == []
    assert outcome.state["yaml"] == LONG_YAML
    result = model.requests[-1].messages[-1]["content"][0]
    assert result["is_error"] and "read_only" in result["content"]


async def test_calls_past_the_tool_budget_are_not_asked_about() -> None:
    model = _script(
        ("add_jobs", {"jobs": [{"name": "Dedupe", "adaptor": "common"}]}),
        ("remove_jobs", {"keys": ["check"]}),
    )
    done = await run(model, "add and remove", yaml=LONG_YAML, config={"max_tool_calls": 1})
    assert done.of("confirm.required") == []
    assert "check" in done.doc.structure.jobs
