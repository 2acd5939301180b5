"""Review mode in the terminal client: a proposal as text (changes, impact, a compact
diff), answers to it, and asking on scripted input."""

from __future__ import annotations

import asyncio
import io

import pytest

from app.client import review
from app.client.terminal import LineReader, Output
from app.ws.protocol import SERVER_FRAME_ADAPTER
from tests.client import frames


def test_frames_match_the_contract() -> None:
    # The recorded frames these tests use are frames the server's own models accept
    # (extra keys are refused there; the wire leaves out fields that are None).
    for frame in frames.all_frames():
        assert SERVER_FRAME_ADAPTER.validate_python(frame).type == frame["type"]


def test_proposal_from_reads_a_frame_and_a_pending_confirmation_alike() -> None:
    frame = frames.proposal()
    pending = {
        "turn_id": "t1",
        "request_id": "p1",
        "question": "Apply these 2 changes?",
        "proposal": {k: frame[k] for k in ("base_version", "yaml", "diff", "changes")},
    }
    from_frame = review.proposal_from(frame)
    assert from_frame is not None
    assert from_frame == review.proposal_from(pending)
    assert review.change_ids(from_frame) == ["c1", "c2"]
    assert from_frame["base_version"] == 3
    # A plain confirmation and a plan review are not proposals.
    assert review.proposal_from({"turn_id": "t", "request_id": "r", "question": "Remove?"}) is None
    assert review.proposal_from({"request_id": "r", "plan": {"plan": {}}}) is None
    assert review.proposal_from(None) is None


def test_a_proposal_lists_each_change_with_its_impact_and_the_diff() -> None:
    proposal = review.proposal_from(frames.proposal())
    assert proposal is not None
    lines = review.render_proposal(proposal)
    assert lines[0] == "Proposed changes on v3: 2 changes"
    assert lines[2:5] == [
        "  c1  Removed Check coverage (check).  [remove_jobs]",
        "      ⚠ impact: 'Notify clinic' would no longer run.",
        "  c2  Added Dedupe (dedupe, common).  [add_job]",
    ]
    assert lines[5] == "  Diff (11 lines):"
    assert lines[6:] == ["    " + line for line in frames.DIFF_LINES]


def test_a_long_diff_is_cut_and_diff_shows_it_all() -> None:
    long = "\n".join(["--- v3", "+++ draft"] + [f"+  line {n}" for n in range(50)])
    proposal = review.proposal_from(frames.proposal(diff=long))
    assert proposal is not None
    lines = review.render_proposal(proposal)
    shown = lines[lines.index("  Diff (52 lines):") + 1 :]
    assert len(shown) == review.COMPACT_DIFF_LINES + 1
    assert shown[-1] == "    … 22 more diff lines (/diff shows them)"
    whole = review.render_proposal(proposal, full_diff=True)
    assert "    +  line 49" in whole and not any("more diff lines" in x for x in whole)


def test_impact_is_red_and_diff_lines_are_coloured_on_a_terminal() -> None:
    def paint(text: str, style: str) -> str:
        return f"<{style}>{text}</{style}>"

    proposal = review.proposal_from(frames.proposal())
    assert proposal is not None
    lines = review.render_proposal(proposal, paint)
    assert "      <red>⚠ impact: 'Notify clinic' would no longer run.</red>" in lines
    assert "    <red>-  check:</red>" in lines
    assert "    <green>+  dedupe:</green>" in lines
    assert "    <cyan>@@ -7,14 +7,6 @@</cyan>" in lines
    assert "       notify:" in lines  # context lines are not painted


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        ("a", ("c1", "c2")),
        (" Accept ", ("c1", "c2")),
        ("y", ("c1", "c2")),
        ("r", ()),
        ("no", ()),
        ("c2", ("c2",)),
        ("C2 c1", ("c1", "c2")),  # any case, the proposal's order
        ("c1,c2", ("c1", "c2")),
    ],
)
def test_answers(text: str, accepted: tuple[str, ...]) -> None:
    answer = review.parse_answer(text, ["c1", "c2"])
    assert answer == review.ReviewAnswer(accepted)
    assert answer.frame("p1") == {"type": "review", "request_id": "p1", "accepted": list(accepted)}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "Answer a (accept all), r (reject), or the ids"),
        ("c3", "No change c3 in this proposal (its changes: c1, c2)."),
        ("c1 maybe", "No change maybe in this proposal"),
        ("a c1", "No change a in this proposal"),
    ],
)
def test_what_is_not_an_answer_says_why(text: str, problem: str) -> None:
    answer = review.parse_answer(text, ["c1", "c2"])
    assert isinstance(answer, str) and answer.startswith(problem)


async def ask_with(
    script: str, *, read_only: bool = False
) -> tuple[review.ReviewAnswer | None, str]:
    stream = io.StringIO()
    lines = LineReader(io.StringIO(script), asyncio.get_running_loop())
    proposal = review.proposal_from(frames.proposal())
    assert proposal is not None
    try:
        answer = await review.ask_review(Output(stream), lines, proposal, read_only=read_only)
    finally:
        lines.close()
    return answer, stream.getvalue()


async def test_asking_shows_the_whole_diff_and_asks_again_until_an_answer() -> None:
    answer, transcript = await ask_with("/diff\nc9\nc1\n")
    assert answer == review.ReviewAnswer(("c1",))
    assert "? Apply these 2 changes?" in transcript
    after_diff = transcript.split(review.PROMPT + "/diff\n", 1)[1]
    assert after_diff.startswith("    --- v3\n")
    assert "  No change c9 in this proposal" in transcript


async def test_no_answer_leaves_the_proposal_open_and_read_only_cannot_answer() -> None:
    answer, transcript = await ask_with("")
    assert answer is None
    assert "the proposal stays open in this session; /review to answer it" in transcript
    answer, transcript = await ask_with("a\n", read_only=True)
    assert answer is None
    assert "(read-only: an editor accepts or rejects these changes)" in transcript
    assert review.PROMPT not in transcript


def test_the_question_leaves_out_the_reply_already_shown() -> None:
    said = "- Removed Check coverage.\nNote: 'Alert staff' never runs."
    question = f"{said}\n\nApply this change?"
    assert review.unsaid(question, said) == "Apply this change?"
    assert review.unsaid(question, said + "\n") == "Apply this change?"
    assert review.unsaid(question, "") == question  # nothing shown: all of it
    assert review.unsaid("Apply this change?", "Something else.") == "Apply this change?"
