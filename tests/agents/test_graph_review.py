"""Review mode through the real graph: a draft, a proposal, then all, some or none applied."""

from __future__ import annotations

from typing import Any

import pytest

from agents.models import ScriptedModel
from agents.offline import OfflineModel
from agents.review import DependentChangeError, StaleProposalError, replay
from agents.runtime import InMemoryCommitter
from tests.agents.helpers import BASE_YAML, Outcome, counting_ids, run
from tests.documents import REFERRAL_DOC
from tools.document import WorkflowDocument
from tools.registry import run_tool

S = ScriptedModel


def _add_and_connect() -> ScriptedModel:
    return ScriptedModel(
        [
            S.tool_calls(("add_jobs", {"jobs": [{"name": "Notify clinic", "adaptor": "gmail"}]})),
            S.tool_calls(
                ("add_edges", {"edges": [{"source": "check", "target": "notify-clinic"}]})
            ),
            S.text("Added Notify clinic after Check coverage."),
        ]
    )


async def _answer(
    paused: Outcome, accepted: list[str], head: tuple[str, int] | None = None
) -> Outcome:
    """Answer as the service does: replay on the parsed head, resume with the result."""
    yaml, version = head or (BASE_YAML, 1)
    doc = WorkflowDocument.from_yaml(yaml)
    done = replay(
        base_yaml=BASE_YAML,
        head=doc,
        moved=version != 1,
        draft=_draft_of(paused),
        accepted=accepted,
        ctx=counting_ids(),
        max_bytes=1 << 20,
    )
    paused.runtime.adopt(doc, version)
    answer = {
        "accepted": accepted,
        "applied": done.applied,
        "yaml": doc.to_yaml(),
        "name": doc.name,
        "changes": [c.as_dict() for c in done.changes],
        "head_version": version,
    }
    resumed = paused.runner.resume("turn-1", bool(accepted), paused.runtime, answer=answer)
    events = [e.wire() async for e in resumed]
    return Outcome(events, await paused.runner.state("turn-1"), paused.runner, paused.runtime)


def _committed(outcome: Outcome) -> list[dict[str, Any]]:
    committer = outcome.runtime.committer
    assert isinstance(committer, InMemoryCommitter)
    return committer.versions


async def test_a_review_turn_commits_nothing_and_ends_with_a_proposal() -> None:
    paused = await run(_add_and_connect(), "add a notify step", review=True)
    assert paused.of("workflow") == []  # nothing published
    assert _committed(paused) == []  # nothing committed
    proposal = paused.last
    assert proposal["type"] == "proposal"
    assert proposal["request_id"] == "review-turn-1"
    assert proposal["base_version"] == 1
    assert [c["id"] for c in proposal["changes"]] == ["c1", "c2"]
    assert [c["tool"] for c in proposal["changes"]] == ["add_jobs", "add_edges"]
    assert "Notify clinic" in proposal["changes"][0]["summary"]
    draft = WorkflowDocument.from_yaml(proposal["yaml"])
    assert "notify-clinic" in draft.structure.jobs
    assert draft.structure.find_edge("check", "notify-clinic") is not None
    assert proposal["diff"].startswith("--- version 1\n+++ proposed\n")
    assert "+  notify-clinic:" in proposal["diff"]
    assert "Added Notify clinic after Check coverage." in proposal["question"]
    # The pause is what a reload finds.
    pending = await paused.runner.pending_confirmation("turn-1")
    assert pending is not None and pending["proposal"]["yaml"] == proposal["yaml"]


async def test_accepting_all_commits_one_version_equal_to_the_draft() -> None:
    paused = await run(_add_and_connect(), "add a notify step", review=True)
    done = await _answer(paused, ["c1", "c2"])
    versions = _committed(done)
    assert len(versions) == 1 and versions[0]["version"] == 2
    assert versions[0]["tool"] == "review"
    # Replayed with the ids the draft minted: what was shown is what landed.
    assert versions[0]["yaml"] == paused.last["yaml"]
    assert [f["version"] for f in done.of("workflow")] == [2]
    assert done.last["type"] == "turn.completed" and done.last["version"] == 2
    text = done.of("message")[0]["text"]
    assert "Applied 2 of 2 proposed changes as version 2" in text


async def test_accepting_some_applies_only_those() -> None:
    paused = await run(_add_and_connect(), "add a notify step", review=True)
    done = await _answer(paused, ["c1"])
    (version,) = _committed(done)
    doc = WorkflowDocument.from_yaml(version["yaml"])
    assert "notify-clinic" in doc.structure.jobs
    assert doc.structure.find_edge("check", "notify-clinic") is None
    assert "Not applied: Added 1 edge" in done.of("message")[0]["text"]


async def test_rejecting_commits_nothing_and_says_so() -> None:
    paused = await run(_add_and_connect(), "add a notify step", review=True)
    done = await _answer(paused, [])
    assert _committed(done) == [] and done.of("workflow") == []
    assert done.last["type"] == "turn.completed" and done.last["version"] == 1
    assert "Nothing was applied; the workflow stays at version 1." in done.of("message")[0]["text"]
    # The planner's next turn hears what happened through the history.
    assert "Nothing was applied" in done.state["history"][-1]["content"]


async def test_a_turn_that_changes_nothing_ends_without_a_proposal() -> None:
    model = ScriptedModel([S.text("The workflow has two steps.")])
    outcome = await run(model, "what does it do?", review=True)
    assert outcome.last["type"] == "turn.completed"


def _draft_of(paused: Outcome) -> list[dict[str, Any]]:
    return list(paused.state["draft"])


async def test_a_change_that_needs_a_rejected_one_is_named_and_nothing_applies() -> None:
    paused = await run(_add_and_connect(), "add a notify step", review=True)
    with pytest.raises(DependentChangeError) as caught:
        replay(
            base_yaml=BASE_YAML,
            head=WorkflowDocument.from_yaml(BASE_YAML),
            moved=False,
            draft=_draft_of(paused),
            accepted=["c2"],
            ctx=counting_ids(),
            max_bytes=1 << 20,
        )
    assert caught.value.details == {"changes": ["c2"], "needs": ["c1"]}
    assert "c2" in caught.value.message and "c1" in caught.value.message


async def test_a_head_moved_by_someone_else_applies_when_nothing_conflicts() -> None:
    paused = await run(_add_and_connect(), "add a notify step", review=True)
    head = WorkflowDocument.from_yaml(BASE_YAML)
    assert run_tool(head, "update_workflow", {"name": "Referrals v2"}).ok
    done = await _answer(paused, ["c1", "c2"], head=(head.to_yaml(), 2))
    (version,) = _committed(done)
    assert version["version"] == 3
    doc = WorkflowDocument.from_yaml(version["yaml"])
    assert doc.name == "Referrals v2" and "notify-clinic" in doc.structure.jobs


async def test_a_head_that_conflicts_makes_the_proposal_stale() -> None:
    paused = await run(_add_and_connect(), "add a notify step", review=True)
    head = WorkflowDocument.from_yaml(BASE_YAML)
    assert run_tool(head, "remove_jobs", {"keys": ["check"]}).ok  # the edge's source is gone
    with pytest.raises(StaleProposalError):
        replay(
            base_yaml=BASE_YAML,
            head=head,
            moved=True,
            draft=_draft_of(paused),
            accepted=["c1", "c2"],
            ctx=counting_ids(),
            max_bytes=1 << 20,
        )


async def test_unknown_change_ids_are_refused() -> None:
    paused = await run(_add_and_connect(), "add a notify step", review=True)
    with pytest.raises(Exception, match="no change 'c9'"):
        replay(
            base_yaml=BASE_YAML,
            head=WorkflowDocument.from_yaml(BASE_YAML),
            moved=False,
            draft=_draft_of(paused),
            accepted=["c9"],
            ctx=counting_ids(),
            max_bytes=1 << 20,
        )


def _write_code() -> ScriptedModel:
    return ScriptedModel(
        [
            S.tool_calls(("call_job_code_agent", {"job_key": "check", "message": "look it up"})),
            S.tool_calls(
                (
                    "edit_job_code",
                    {
                        "edits": [
                            {
                                "action": "rewrite",
                                "new_code": "get('Coverage', { query: { patient: $.id } });\n",
                            }
                        ]
                    },
                )
            ),
            S.text("Wrote it."),
            S.text("The coverage check now looks the patient up."),
        ]
    )


async def test_code_written_in_review_is_a_change_that_replays() -> None:
    paused = await run(_write_code(), "write the coverage code", review=True)
    assert paused.last["type"] == "proposal", paused.events
    (change,) = paused.last["changes"]
    assert change["tool"] == "call_job_code_agent"
    done = await _answer(paused, ["c1"])
    (version,) = _committed(done)
    body = WorkflowDocument.from_yaml(version["yaml"]).structure.jobs["check"].body or ""
    assert body.strip() == "get('Coverage', { query: { patient: $.id } });"
    assert version["yaml"] == paused.last["yaml"]


async def test_code_someone_else_changed_since_makes_the_proposal_stale() -> None:
    paused = await run(_write_code(), "write the coverage code", review=True)
    head = WorkflowDocument.from_yaml(BASE_YAML)
    from tools.jobcode.stitch import stitch_job_code

    assert stitch_job_code(head, "check", "fn(state => state);\n").ok
    with pytest.raises(StaleProposalError, match="changed by someone else"):
        replay(
            base_yaml=BASE_YAML,
            head=head,
            moved=True,
            draft=_draft_of(paused),
            accepted=["c1"],
            ctx=counting_ids(),
            max_bytes=1 << 20,
        )


def _changes(*calls: tuple[str, dict[str, Any]]) -> ScriptedModel:
    return ScriptedModel([*(S.tool_calls(call) for call in calls), S.text("Done.")])


def _moved_head(*calls: tuple[str, dict[str, Any]]) -> WorkflowDocument:
    """The base as another editor left it after ``calls``."""
    head = WorkflowDocument.from_yaml(BASE_YAML)
    for name, args in calls:
        assert run_tool(head, name, args).ok, (name, args)
    return head


NOTIFY_AFTER_CHECK: tuple[tuple[str, dict[str, Any]], ...] = (
    ("add_jobs", {"jobs": [{"name": "Notify clinic", "key": "notify", "adaptor": "common"}]}),
    ("add_edges", {"edges": [{"source": "check", "target": "notify"}]}),
)


def _replay_on(paused: Outcome, head: WorkflowDocument, accepted: list[str]) -> Any:
    return replay(
        base_yaml=BASE_YAML,
        head=head,
        moved=True,
        draft=_draft_of(paused),
        accepted=accepted,
        ctx=counting_ids(),
        max_bytes=1 << 20,
    )


async def test_a_disconnection_that_would_stop_more_on_the_head_than_shown_is_stale() -> None:
    """The proposal said Check coverage would no longer run; meanwhile a step was added
    after it, so on the head the same change would stop that one too."""
    paused = await run(
        _changes(("remove_edges", {"edges": [{"source": "fetch", "target": "check"}]})),
        "disconnect the coverage check",
        review=True,
    )
    (change,) = paused.last["changes"]
    assert "'Check coverage' would no longer run (no trigger would reach it)." in change["impact"]
    with pytest.raises(StaleProposalError, match="do more than its impact said") as caught:
        _replay_on(paused, _moved_head(*NOTIFY_AFTER_CHECK), ["c1"])
    assert "'Notify clinic'" in caught.value.message


async def test_connecting_a_step_someone_else_changed_is_stale() -> None:
    """A change reads the steps it connects: one whose adaptor someone else changed
    meanwhile is no longer the step the proposal showed."""
    paused = await run(_add_and_connect(), "add a notify step", review=True)
    head = _moved_head(("update_jobs", {"jobs": [{"key": "check", "adaptor": "common"}]}))
    with pytest.raises(StaleProposalError, match="someone else changed the step 'Check cov"):
        _replay_on(paused, head, ["c1", "c2"])
    # The step it adds reads nothing of theirs: alone, it applies.
    done = _replay_on(
        paused,
        _moved_head(("update_jobs", {"jobs": [{"key": "check", "adaptor": "common"}]})),
        ["c1"],
    )
    assert done.applied == ["c1"]


async def test_the_same_code_written_meanwhile_is_no_conflict() -> None:
    paused = await run(_write_code(), "write the coverage code", review=True)
    head = WorkflowDocument.from_yaml(BASE_YAML)
    from tools.jobcode.stitch import stitch_job_code

    assert stitch_job_code(head, "check", "get('Coverage', { query: { patient: $.id } });").ok
    assert _replay_on(paused, head, ["c1"]).applied == ["c1"]


# --- the question says only what the impacts say --------------------------------------


async def test_a_plain_insert_is_not_said_to_stop_anything() -> None:
    """Inserting a step after Fetch referral (no trigger: nothing runs either way) only
    points Fetch referral's connection at the new step: that is all the question says."""
    paused = await run(
        OfflineModel(), "add a dedupe step after fetch referral", yaml=REFERRAL_DOC, review=True
    )
    proposal = paused.last
    assert proposal["type"] == "proposal", paused.events
    impacts = [sentence for c in proposal["changes"] for sentence in c["impact"]]
    assert impacts == [
        "The connection from 'Fetch referral' to 'Check coverage' would go to 'Dedupe' instead."
    ]
    assert proposal["question"].endswith(
        "Apply these 3 changes? One of them would point a connection at another step "
        "(see its impact)."
    )
    assert "stop" not in proposal["question"] and "remov" not in proposal["question"]


async def test_the_question_names_each_kind_of_impact_and_nothing_more() -> None:
    # Behind a trigger, the same insert's retarget also stops a step until the new one
    # leads on to Check coverage: both are said.
    paused = await run(OfflineModel(), "add a dedupe step after fetch referral", review=True)
    assert paused.last["question"].endswith(
        "One of them would stop a step from running and point a connection at another step "
        "(see its impact)."
    )
    removal = await run(_changes(("remove_jobs", {"keys": ["check"]})), "remove it", review=True)
    assert removal.last["question"].endswith(
        "Apply this change? It would remove a step (see its impact)."
    )
    harmless = await run(_add_and_connect(), "add a notify step", review=True)
    assert harmless.last["question"].endswith("Apply these 2 changes?")
