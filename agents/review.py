"""Review mode (DESIGN §5c): a turn's changes made on a draft, proposed, then applied in part.

While a review-mode turn runs, every change the planner makes lands on a draft: the
document in the turn's state, never committed or published. Each change is kept as a
*recipe* that can be applied again on another document: a tool call with its
arguments and the ids it minted, or one step's new code. When the turn ends the
client gets a :class:`~agents.events.ProposalEvent` (draft YAML, a unified diff, one
change per tool call with its impact); the answer names the changes to keep, and
:func:`replay` applies exactly those, in order, on the head the workflow is at then.

Two ways an answer cannot be applied, and nothing is then committed:
- **dependent**: an accepted change needs a change that was not accepted (a new
  step's edge without the step). The ids are reported; the proposal stays open.
- **stale**: another editor moved the head since the draft was made and the accepted
  changes do not apply on it as they did on the draft's base: one fails there, one
  reads or writes a step, connection or trigger the other editor changed (or a step
  whose running it changes), one would change more on the head than on the base, or
  its impact there is bigger than the one shown. The proposal is closed.

Pure functions over documents and recipes: the graph (``agents/nodes/review.py``)
and the service's pre-check (``app/turns.py``) call the same ones.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.review_stale import Step, changed_entries, stale_reason
from tools.base import ToolContext, ToolResult
from tools.document import WorkflowDocument
from tools.document.impact import EFFECTS, Impact, effects_text
from tools.document.impact import impact as impact_of
from tools.document.structure import Change, Structure
from tools.errors import PlanwrightError
from tools.jobcode.stitch import stitch_job_code
from tools.registry import run_tool

REVIEW_TOOL = "review"
"""What the version an accepted proposal commits names as its tool."""


class ReviewError(PlanwrightError):
    """An answer to a proposal that cannot be applied; nothing was committed."""

    code = "invalid_review"


class DependentChangeError(ReviewError):
    """An accepted change cannot apply without one that was not accepted."""

    code = "dependent_change"


class StaleProposalError(ReviewError):
    """The workflow moved since the draft, and the accepted changes no longer apply."""

    code = "stale_proposal"


class RecordingIds:
    """An id factory that notes every id it hands out (so a replay can mint the same)."""

    def __init__(self, inner: Callable[[], str]) -> None:
        self.inner = inner
        self.minted: list[str] = []

    def __call__(self) -> str:
        value = self.inner()
        self.minted.append(value)
        return value


class _ReplayIds:
    """Hands out a change's recorded ids in order, then fresh ones."""

    def __init__(self, ids: Sequence[str], fresh: Callable[[], str]) -> None:
        self._ids: Iterator[str] = iter(list(ids))
        self._fresh = fresh

    def __call__(self) -> str:
        return next(self._ids, None) or self._fresh()


def with_ids(ctx: ToolContext, new_id: Callable[[], str]) -> ToolContext:
    """``ctx`` with another id factory. A shallow copy keeps its loaded catalogue and
    docs index (cached on the instance), so this costs nothing."""
    clone = copy.copy(ctx)
    clone.new_id = new_id
    return clone


def tool_recipe(name: str, args: dict[str, Any], ids: Sequence[str]) -> dict[str, Any]:
    """How to apply a structural tool call again: the call and the ids it minted."""
    return {"kind": "tool", "tool": name, "args": args, "ids": list(ids)}


def code_recipe(tool: str, job_key: str, body: str, old_body: str) -> dict[str, Any]:
    """How to apply one step's new code again; ``old_body`` is what it replaced, so a
    replay on a head where someone else changed that code is stale, not an overwrite."""
    return {"kind": "code", "tool": tool, "job_key": job_key, "body": body, "old_body": old_body}


def draft_entry(
    draft: Sequence[dict[str, Any]], summary: str, recipe: dict[str, Any]
) -> dict[str, Any]:
    """The next change of a draft: ``c1``, ``c2``, ... in the order they were made."""
    return {
        "id": f"c{len(draft) + 1}",
        "tool": recipe["tool"],
        "summary": summary,
        "recipe": recipe,
    }


def apply_recipe(
    doc: WorkflowDocument, recipe: dict[str, Any], ctx: ToolContext, *, strict_code: bool = False
) -> ToolResult:
    """Apply one recipe to ``doc`` (in place); a failure leaves ``doc`` unchanged.

    ``strict_code``: a code change applies only where the step's code is still what it
    replaced (on another editor's head, changed code means the change is stale)."""
    if recipe["kind"] == "code":
        job = doc.structure.jobs.get(recipe["job_key"])
        if job is None:
            return ToolResult.failure(
                "unknown_job", f"There is no step {recipe['job_key']!r}.", mutating=True
            )
        if strict_code and job.body != recipe["old_body"] and job.body != recipe["body"]:
            return ToolResult.failure(
                "code_changed",
                f"The code of {recipe['job_key']!r} was changed by someone else.",
                mutating=True,
            )
        return stitch_job_code(doc, recipe["job_key"], recipe["body"], catalogue=ctx.catalogue)
    replay_ctx = with_ids(ctx, _ReplayIds(recipe.get("ids") or [], ctx.new_id))
    return run_tool(doc, recipe["tool"], recipe["args"], context=replay_ctx)


@dataclass
class Replayed:
    """The accepted changes applied on a document."""

    doc: WorkflowDocument
    """The document with every accepted change applied."""
    changes: list[Change] = field(default_factory=list)
    """What they changed, in order (for the version's ``changes``)."""
    applied: list[str] = field(default_factory=list)
    """The ids applied, in order."""


def _apply_all(
    doc: WorkflowDocument,
    draft: Sequence[dict[str, Any]],
    ids: set[str],
    ctx: ToolContext,
    *,
    strict_code: bool = False,
    steps: list[Step] | None = None,
) -> tuple[Replayed, dict[str, Any] | None, ToolResult | None]:
    """Apply the entries of ``draft`` whose id is in ``ids`` to ``doc``, in order, until
    one fails: returns what was applied, and the entry that failed with its result.
    ``steps``, when given, gets each applied change with the structures around it."""
    done = Replayed(doc)
    for entry in draft:
        if entry["id"] not in ids:
            continue
        before = doc.structure
        result = apply_recipe(doc, entry["recipe"], ctx, strict_code=strict_code)
        if not result.ok:
            return done, entry, result
        if steps is not None:
            steps.append(Step(entry, before, doc.structure))
        done.changes += result.changes
        done.applied.append(entry["id"])
    return done, None, None


def replay(
    *,
    base_yaml: str,
    head: WorkflowDocument,
    moved: bool,
    draft: Sequence[dict[str, Any]],
    accepted: Sequence[str],
    ctx: ToolContext,
    max_bytes: int,
) -> Replayed:
    """Apply the ``accepted`` changes of ``draft``, in draft order, on ``head`` (the
    workflow as it is now, parsed; changed in place, so a caller whose replay raised
    must drop it).

    A change that cannot apply on the draft's base without the changes that were not
    accepted is a :class:`DependentChangeError` naming it and the ones it needs. Ids not
    in the draft are a :class:`ReviewError`.

    If the head ``moved`` since the base, each accepted change must do on the head what
    it does on the base (:func:`agents.review_stale.stale_reason`), else the answer is a
    :class:`StaleProposalError`: it fails there; it reads or writes an entry the other
    editor changed (for a removal or disconnection, the steps it stops included); it
    would change more or other entries; or its impact there is bigger.

    When the head is the base (the usual case) the changes are applied straight onto
    the head the service already holds parsed: accepting costs what the tool calls cost,
    not a parse of the document. Only a refusal (or a moved head) parses the base.
    """
    known = [entry["id"] for entry in draft]
    unknown = [i for i in accepted if i not in known]
    if unknown:
        raise ReviewError(
            f"This proposal has no change {', '.join(map(repr, unknown))}; "
            f"its changes are {', '.join(known)}. Nothing was applied."
        )
    ids = set(accepted)
    if not moved:
        done, failed, result = _apply_all(head, draft, ids, ctx)
        if failed is not None:
            raise _dependent(base_yaml, draft, ids, failed, result, ctx, max_bytes)
        return done
    # Is the answer itself sound? (on the head it could fail for either reason)
    base = WorkflowDocument.from_yaml(base_yaml, max_bytes=max_bytes)
    base_structure = base.structure
    on_base: list[Step] = []
    _, failed, result = _apply_all(base, draft, ids, ctx, steps=on_base)
    if failed is not None:
        raise _dependent(base_yaml, draft, ids, failed, result, ctx, max_bytes)
    head_structure = head.structure
    on_head: list[Step] = []
    done, failed, result = _apply_all(head, draft, ids, ctx, strict_code=True, steps=on_head)
    if failed is not None:
        raise _stale(failed, result.message if result is not None else "")
    others = changed_entries(base_structure, head_structure)
    for was, now in zip(on_base, on_head, strict=True):
        reason = stale_reason(was, now, others, head_structure)
        if reason:
            raise _stale(was.entry, reason)
    return done


def _stale(entry: dict[str, Any], reason: str) -> StaleProposalError:
    return StaleProposalError(
        f"The workflow was changed by someone else while this proposal waited, and "
        f"change {entry['id']} ({entry['summary']}) no longer applies: {reason} "
        "Nothing was applied; ask again to get a new proposal."
    )


def _dependent(
    base_yaml: str,
    draft: Sequence[dict[str, Any]],
    ids: set[str],
    failed: dict[str, Any],
    result: ToolResult | None,
    ctx: ToolContext,
    max_bytes: int,
) -> DependentChangeError:
    """Which not-accepted earlier changes the failed one needs: each one that, added
    alone, lets it apply; if none alone does, all of them."""
    position = next(i for i, e in enumerate(draft) if e["id"] == failed["id"])
    earlier = [e["id"] for e in draft[:position] if e["id"] not in ids]
    needs = []
    for candidate in earlier:
        upto = {e["id"] for e in draft[: position + 1]} & (ids | {candidate})
        base = WorkflowDocument.from_yaml(base_yaml, max_bytes=max_bytes)
        _, still, _ = _apply_all(base, draft, upto, ctx)
        if still is None:
            needs.append(candidate)
    needs = needs or earlier
    summaries = {e["id"]: e["summary"] for e in draft}
    if needs:
        wanted = ", ".join(f"{i} ({summaries[i]})" for i in needs)
        why = f"it needs {wanted}, which {'was' if len(needs) == 1 else 'were'} not accepted"
    else:  # nothing earlier was left out: it cannot apply on this base at all
        why = result.message if result is not None else "it does not apply"
    return DependentChangeError(
        f"Change {failed['id']} ({failed['summary']}) cannot be applied: {why}. "
        "Nothing was applied; accept it together with what it needs, or leave it out.",
        changes=[failed["id"]],
        needs=needs,
    )


@dataclass
class Proposed:
    """A draft's changes as the proposal shows them."""

    changes: list[dict[str, Any]]
    """Each change: ``{id, tool, summary, impact}`` (``impact``: its sentences)."""
    question: str
    """What to answer, saying only what the impacts say ("Apply these 3 changes? One of
    them would point a connection at another step (see its impact).")."""


def proposal_changes(
    base_yaml: str, draft: Sequence[dict[str, Any]], ctx: ToolContext, *, max_bytes: int
) -> Proposed:
    """Each change of the draft with its impact, computed from the document graph by
    applying the changes one by one on the base (what *this* change stops), and the
    question that asks about them."""
    doc = WorkflowDocument.from_yaml(base_yaml, max_bytes=max_bytes)
    out = []
    impacts: list[Impact] = []
    for entry in draft:
        before: Structure = doc.structure
        result = apply_recipe(doc, entry["recipe"], ctx)
        impact = impact_of(before, doc.structure) if result.ok else Impact()
        impacts.append(impact)
        out.append(
            {
                "id": entry["id"],
                "tool": entry["tool"],
                "summary": entry["summary"],
                "impact": list(impact.sentences),
            }
        )
    return Proposed(out, review_question(impacts))


def review_question(impacts: Sequence[Impact]) -> str:
    """The proposal's question for changes with these impacts: how many there are and,
    when some change what runs, the kinds of thing they do (only what they do)."""
    count = len(impacts)
    question = f"Apply {'this change' if count == 1 else f'these {count} changes'}?"
    doing = [i for i in impacts if i]
    if not doing:
        return question
    counts: dict[str, int] = {}
    for impact in doing:
        for kind, n in impact.effects.items():
            counts[kind] = counts.get(kind, 0) + n
    words = effects_text({kind: counts[kind] for kind in EFFECTS if kind in counts})
    if count == 1:
        return f"{question} It would {words} (see its impact)."
    if len(doing) == 1:
        return f"{question} One of them would {words} (see its impact)."
    who = "Between them they" if len(doing) == count else "Some of them"
    return f"{question} {who} would {words} (see each change's impact)."


def unified_diff(base_yaml: str, draft_yaml: str, base_version: int) -> str:
    """The draft against its base, as a unified diff."""
    return "".join(
        difflib.unified_diff(
            base_yaml.splitlines(keepends=True),
            draft_yaml.splitlines(keepends=True),
            fromfile=f"version {base_version}",
            tofile="proposed",
        )
    )


def outcome_text(draft: Sequence[dict[str, Any]], applied: Sequence[str], version: int) -> str:
    """What was applied and what was not, for the user and the planner's history."""
    kept = [e for e in draft if e["id"] in applied]
    left = [e for e in draft if e["id"] not in applied]
    if not kept:
        return f"Nothing was applied; the workflow stays at version {version}."
    plural = "s" if len(draft) != 1 else ""
    text = f"Applied {len(kept)} of {len(draft)} proposed change{plural} as version {version}: "
    text += "; ".join(e["summary"].rstrip(".") for e in kept) + "."
    if left:
        text += " Not applied: " + "; ".join(e["summary"].rstrip(".") for e in left) + "."
    return text
