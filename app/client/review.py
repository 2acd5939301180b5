"""Review mode in the terminal: a proposed set of changes as readable lines, the diff
(compact, or whole with ``/diff``), and the user's answer to it (DESIGN §5c).

Pure functions over the wire frames but for :func:`ask_review`: a proposal is a
``proposal`` frame, or a session's ``pending_confirmation`` whose ``proposal`` holds
``{base_version, yaml, diff, changes}``; :func:`proposal_from` reads either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.client.terminal import LineReader, Output, ask

Paint = Callable[[str, str], str]

COMPACT_DIFF_LINES = 30
"""Diff lines shown with a proposal; ``/diff`` shows the rest."""
ACCEPT = ("a", "accept", "all", "y", "yes")
REJECT = ("r", "reject", "none", "n", "no")
PROMPT = "  [a]ccept all, [r]eject, or the ids to accept (e.g. c1 c3); /diff for the whole diff: "
IMPACT_MARK = "⚠ impact:"


def _plain(text: str, style: str) -> str:
    return text


def proposal_from(source: dict[str, Any] | None) -> dict[str, Any] | None:
    """The proposal in a ``proposal`` frame or a ``pending_confirmation`` (None when it
    is not a review-mode proposal)."""
    if not source:
        return None
    nested = source.get("proposal")
    if isinstance(nested, dict):
        holder = nested  # pending_confirmation.proposal = {base_version, yaml, diff, changes}
    elif source.get("type") == "proposal" or isinstance(source.get("changes"), list):
        holder = source  # a proposal frame: its parts beside request_id
    else:
        return None
    if not source.get("request_id") or not isinstance(holder.get("changes"), list):
        return None
    return {
        "turn_id": source.get("turn_id"),
        "request_id": str(source["request_id"]),
        "question": source.get("question") or "",
        "base_version": holder.get("base_version"),
        "yaml": holder.get("yaml") or "",
        "diff": holder.get("diff") or "",
        "changes": [c for c in holder["changes"] if isinstance(c, dict) and c.get("id")],
    }


def unsaid(question: str, said: str) -> str:
    """The question without the reply already shown before it (the server's question may
    repeat the turn's final message, which the client printed as it streamed)."""
    said = said.strip()
    if said and question.strip().startswith(said):
        return question.strip()[len(said) :].strip()
    return question


def change_ids(proposal: dict[str, Any]) -> list[str]:
    return [str(c["id"]) for c in proposal["changes"]]


def diff_lines(diff: str, paint: Paint = _plain, limit: int | None = None) -> list[str]:
    """The unified diff, indented and coloured (``+`` green, ``-`` red, hunks cyan);
    with ``limit``, at most that many lines and then how many were left out."""
    lines = diff.splitlines()
    shown = lines if limit is None else lines[:limit]
    out: list[str] = []
    for line in shown:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        out.append("    " + (paint(line, style) if style else line))
    if len(shown) < len(lines):
        more = len(lines) - len(shown)
        out.append(
            paint(
                f"    … {more} more diff line{'' if more == 1 else 's'} (/diff shows them)", "dim"
            )
        )
    return out


def render_proposal(
    proposal: dict[str, Any], paint: Paint = _plain, *, full_diff: bool = False
) -> list[str]:
    """The proposal as lines: a heading, each change (id, summary, the tool) with its
    impact lines marked, then the diff (compact unless ``full_diff``)."""
    changes = proposal["changes"]
    count = len(changes)
    base = proposal.get("base_version")
    since = f" on v{base}" if base is not None else ""
    lines = [
        paint(f"Proposed changes{since}: {count} change{'' if count == 1 else 's'}", "bold"),
        "  Nothing is saved until you accept; people watching see nothing yet.",
    ]
    width = max((len(str(c["id"])) for c in changes), default=2)
    for change in changes:
        tool = f"  [{change['tool']}]" if change.get("tool") else ""
        lines.append(
            f"  {paint(str(change['id']).ljust(width), 'bold')}  {change.get('summary', '')}"
            + paint(tool, "dim")
        )
        for impact in change.get("impact") or []:
            lines.append("  " + " " * width + "  " + paint(f"{IMPACT_MARK} {impact}", "red"))
    diff = proposal.get("diff") or ""
    if diff.strip():
        total = len(diff.splitlines())
        lines.append(paint(f"  Diff ({total} line{'' if total == 1 else 's'}):", "dim"))
        lines.extend(diff_lines(diff, paint, None if full_diff else COMPACT_DIFF_LINES))
    else:
        lines.append(paint("  (the document text does not change)", "dim"))
    return lines


@dataclass(frozen=True)
class ReviewAnswer:
    """The change ids to apply (all: accept; none: reject): the ``review`` frame it becomes
    is :meth:`frame`."""

    accepted: tuple[str, ...]

    def frame(self, request_id: str) -> dict[str, Any]:
        return {"type": "review", "request_id": request_id, "accepted": list(self.accepted)}


def parse_answer(text: str, ids: Sequence[str]) -> ReviewAnswer | str:
    """``a``/``accept`` (also y/yes/all): every change; ``r``/``reject`` (also n/no/none):
    none; otherwise the ids to accept, split by spaces or commas, any case, kept in the
    proposal's order. A string: why the text is not an answer (say it and ask again)."""
    words = [w for w in text.replace(",", " ").split() if w]
    if not words:
        return "Answer a (accept all), r (reject), or the ids of the changes to accept."
    if len(words) == 1 and words[0].lower() in ACCEPT:
        return ReviewAnswer(tuple(ids))
    if len(words) == 1 and words[0].lower() in REJECT:
        return ReviewAnswer(())
    by_lower = {i.lower(): i for i in ids}
    unknown = [w for w in words if w.lower() not in by_lower]
    if unknown:
        known = ", ".join(ids) or "none"
        return f"No change {', '.join(unknown)} in this proposal (its changes: {known})."
    chosen = {by_lower[w.lower()] for w in words}
    return ReviewAnswer(tuple(i for i in ids if i in chosen))


def answered_text(answer: ReviewAnswer, ids: Sequence[str]) -> str:
    if not answer.accepted:
        return "  Rejected: nothing changes."
    if len(answer.accepted) == len(ids):
        return "  Accepted all: applying…"
    return f"  Accepting {', '.join(answer.accepted)}: applying…"


async def ask_review(
    out: Output, lines: LineReader, proposal: dict[str, Any], *, read_only: bool, show: bool = True
) -> ReviewAnswer | None:
    """Show the proposal (unless ``show`` is false: asking again) and ask until the user
    accepts all, some or none; None when there is no answer (end of input, or a read-only
    session)."""
    if show:
        out.lines(render_proposal(proposal, out.paint))
        out.line(out.paint(f"? {proposal['question'] or 'Apply these changes?'}", "yellow"))
    if read_only:
        out.line("  (read-only: an editor accepts or rejects these changes)")
        return None
    ids = change_ids(proposal)
    while True:
        reply = await ask(out, lines, PROMPT)
        if reply is None:
            break
        if reply.strip().lower() == "/diff":
            out.lines(diff_lines(proposal.get("diff") or "", out.paint))
            continue
        answer = parse_answer(reply, ids)
        if isinstance(answer, ReviewAnswer):
            return answer
        out.line(f"  {answer}")
    out.line("  (no answer: the proposal stays open in this session; /review to answer it)")
    return None
