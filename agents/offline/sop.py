"""Reading an SOP (a list or prose) into steps, branches and a trigger.

The text is cut into sentences (or list lines) and each sentence into pieces at
commas, "then", ";". Every piece is *accounted for*: it becomes steps, a branch
arm, the trigger, a reason ("because ..."), a hand-over to a later step ("move
to documents"), or it is kept in :attr:`Sop.unplaced` so the plausibility check
(:mod:`.plausibility`) can refuse instead of building something else.

Branches, the way people describe them:
* "If A, do X. If B, do Y. For everything else, do Z." is one decision with
  three arms, all hanging off the step before the first "If" (the arms test the
  same thing). Arms that test different things are not merged: that reading is
  ambiguous, so it is left unplaced and asked about.
* "if it fails, alert the team, otherwise store it" is a failure arm and the
  success path.
* "X before I can Y" puts Y after X; inside an arm, Y is where the arms meet.
* "it"/"them" stand for the thing being worked on (the arriving record, the
  last thing fetched or made); checking something does not change what "it" is,
  and every arm of a decision starts from the same thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline import sop_patterns as P
from agents.offline.conditions import Condition
from agents.offline.grammar import (
    SUBJECT,
    split_actions,
)
from agents.offline.layout import Arm, Branch, Sop, Step
from agents.offline.schedule import describe_cron, find_schedule
from agents.offline.sop_clauses import (
    content_words,
    make_steps,
    names_step,
    object_of,
    same_name,
    split_condition,
    subject_hint,
)
from agents.offline.sop_patterns import ARRIVAL, FILLER, MARKER, WEBHOOK

__all__ = ["ARRIVAL", "FILLER", "MARKER", "WEBHOOK", "Piece", "parse_sop", "pieces_of"]


@dataclass
class Piece:
    """One clause of the text and the sentence (or list line) it belongs to."""

    text: str
    sentence: int


def pieces_of(body: str) -> list[Piece]:
    pieces: list[Piece] = []
    sentence = 0
    for line in body.split("\n"):
        line = P.MARKER.sub("", line).strip()
        for part in re.split(r"(?<=[.!?])\s+", line):
            sentence += 1
            for piece in P.CONNECTOR.split(part):
                piece = P.LEADING_WORDS.sub("", piece.strip(" .!?")).strip(" ,.")
                if piece and not P.FILLER.match(piece):
                    pieces.append(Piece(piece, sentence))
    return pieces


class _Reader:
    """The state of one left-to-right reading (see the module docstring)."""

    def __init__(self) -> None:
        self.sop = Sop()
        self.branch: Branch | None = None
        """The decision whose arms are still being read (None outside one)."""
        self.arm: list[Step] | None = None
        """The steps of the arm being read (None: the main flow)."""
        self.arm_sentence = 0
        """The sentence the current arm started in: later pieces of it stay in the arm."""
        self.subject: str | None = None
        """What a bare "it is ..." in a condition tests (the decision step's object)."""
        self.thing = ""
        """What "it"/"them" in a step stand for."""
        self.last_name = ""
        self.decided_after = ""
        """The step the current decision was made after."""
        self.later: list[Step] = []
        """Steps said to come later ("before I can Y"): placed where the arms meet."""

    # ------------------------------------------------------------------ reading

    def read(self, piece: Piece) -> None:
        text = piece.text
        if P.ENABLE.match(text):
            self.sop.enable = True
            return
        enable = P.ENABLE_TAIL.search(text)
        if enable:
            self.sop.enable = True
            text = text[: enable.start()].strip(" ,")
        schedule = find_schedule(text)
        if schedule is not None:
            rest = (text[: schedule.start] + " " + text[schedule.end :]).strip(" ,:")
            rest = P.PERIOD_WORD.sub("", rest).strip(" ,:")
            if P.UNREAD_TIME.match(rest):
                # "every day at dawn": a time next to the schedule that was not read is never
                # taken as midnight.
                self.sop.problems.append(
                    f'I could not read the time in "{piece.text}": say it in digits, e.g. '
                    '"every day at 7" or "at 6:30 pm".'
                )
                return
            self._trigger({"type": "cron", "cron_expression": schedule.cron}, piece)
            if P.RUN_IT.match(rest):
                return
            text = P.LEADING_WORDS.sub("", rest).strip()
        headed = P.HEADED_TRIGGER.match(text)
        if headed:
            value = headed.group("value")
            if P.WEBHOOK.match(value):
                self._trigger({"type": "webhook"}, piece)
                return
            timed = find_schedule(value)
            if timed is not None and P.RUN_IT.match(value[: timed.start] + value[timed.end :]):
                self._trigger({"type": "cron", "cron_expression": timed.cron}, piece)
                return
            self.sop.unplaced.append(piece.text)
            return
        if P.WEBHOOK.match(text):
            self._trigger({"type": "webhook"}, piece)
            arrival = P.ARRIVAL.match(text)
            self.thing = arrival.group("noun") if arrival else self.thing
            rest = _arrival_rest(text[arrival.end() :]) if arrival else ""
            if arrival and rest:
                self.read(Piece(rest, piece.sentence))
            return
        if P.REASON.match(text):
            self.sop.reasons.append(text)
            return
        otherwise = P.ELSE.match(text)
        failure = P.ON_FAILURE.match(text)
        conditional = P.IF.match(text)
        if otherwise:
            self._otherwise(otherwise.group("action"), piece)
        elif failure:
            self._arm(Condition("on_job_failure"), failure.group("action"), piece)
        elif conditional:
            hint = self.subject if self._in_js_decision() else subject_hint(self.last_name)
            condition, action = split_condition(conditional.group("cond"), hint)
            if condition is None:
                self._plain(text, piece)
                return
            if conditional.group("word").lower() == "unless":
                condition = condition.negated()
            if condition.type == "always":
                self._close()
                self._steps(action, piece)
            else:
                if condition.type == "on_job_failure" and not self._fails_last(condition, piece):
                    return
                self._arm(condition, action, piece)
        else:
            self._plain(text, piece)

    def _trigger(self, trigger: dict[str, object], piece: Piece) -> None:
        """One trigger per workflow: a second one that differs is asked about, never chosen."""
        said = self.sop.trigger
        if said is not None and said != trigger:
            self.sop.problems.append(
                f'"{piece.text}" says the workflow starts by {_trigger_words(trigger)}, but it '
                f"also starts by {_trigger_words(said)}: a workflow has one trigger. Say which "
                "one (the other can be a second workflow)."
            )
            return
        self.sop.trigger = trigger

    def _fails_last(self, condition: Condition, piece: Piece) -> bool:
        """Whether "if X fails" is about the step the failure branch would start from (the
        last one read); when not, that is said as a problem."""
        subject = condition.subject
        if not subject or names_step(subject, self.last_name):
            return True
        if P.ANY_STEP.match(re.sub(r"^(?:the|a)\s+", "", subject.strip(), flags=re.I)):
            why = (
                "a branch for any step failing needs an edge from each step, and I would only "
                f'add one from "{self.last_name}"'
            )
        else:
            why = f'the branch would start from "{self.last_name}", which "{subject}" may not be'
        self.sop.problems.append(
            f'In "{piece.text}" I could not tell which step\'s failure is meant: {why}. Say '
            '"if <step> fails, ..." after that step.'
        )
        return False

    def _in_js_decision(self) -> bool:
        return self.branch is not None and self.branch.arms[0].condition.type == "js_expression"

    def _plain(self, text: str, piece: Piece) -> None:
        """A piece with no condition: more of the current arm (same sentence) or the flow."""
        if self.arm is not None and piece.sentence != self.arm_sentence:
            self._close()
        self._steps(text, piece)

    def _arm(self, condition: Condition, action: str, piece: Piece) -> None:
        same_decision = (
            self.branch is not None
            and condition.type == "js_expression"
            and self._in_js_decision()
            and self.branch.arms[0].condition.field() == condition.field()
            and not self.branch.otherwise
        )
        if not same_decision:
            if self.branch is not None:
                if condition.type == "js_expression" and self._in_js_decision():
                    # Two decisions on different things, one after the other: which step the
                    # second hangs off is a guess, so it is asked about instead.
                    self.sop.unplaced.append(piece.text)
                    return
                self._close()
            self.branch = Branch([], before=self.thing)
            self.decided_after = self.last_name
            self.sop.items.append(self.branch)
            self.subject = subject_hint(self.last_name)
        assert self.branch is not None
        self.thing = self.branch.before
        self.arm = []
        self.branch.arms.append(Arm(condition, self.arm))
        self.arm_sentence = piece.sentence
        if action.strip():
            self._steps(action, piece)

    def _otherwise(self, action: str, piece: Piece) -> None:
        if self.branch is None or self.branch.otherwise:
            self.sop.unplaced.append(piece.text)
            return
        self.thing = self.branch.before
        self.arm = self.branch.otherwise
        self.arm_sentence = piece.sentence
        if action.strip():
            self._steps(action, piece)

    def _close(self) -> None:
        """The decision ends: steps said to come later are where its arms meet."""
        if self.branch is None:
            return
        branch = self.branch
        if not branch.otherwise and all(
            arm.stop or arm.condition.type == "on_job_failure" for arm in branch.arms
        ):
            # Only failure arms (they end the run): the flow goes on from the step the
            # decision was made after, with the thing it worked on.
            self.thing, self.last_name = branch.before, self.decided_after
        self.branch, self.arm = None, None
        pending, self.later = self.later, []
        for step in pending:
            self.sop.items.append(step)
            self.last_name = step.name

    def _steps(self, clause: str, piece: Piece) -> None:
        clause = P.TRAILING_FIRST.sub("", clause.strip())
        later = P.BEFORE_CAN.match(clause)
        if later:
            clause = later.group("first")
        clause = SUBJECT.sub("", clause).strip()
        if P.NOTHING.match(clause) and self.arm is not None and self.branch is not None:
            self.branch.arms[-1].stop = True
            return
        steps: list[Step] = []
        for part in split_actions(clause):
            part = SUBJECT.sub("", part).strip()
            hand_over = P.HAND_OVER.match(part)
            if hand_over:
                target = hand_over.group("target") or hand_over.group("target2") or ""
                if self._refers_to_later(target):
                    continue
                if not hand_over.group("go"):
                    self.sop.unplaced.append(part)
                    continue
            if self.thing:
                # The pronoun is read as a placeholder first, so that the thing it stands for
                # never picks the step's adaptor ("validate it" is not a Kobo step).
                part = P.PRONOUN.sub(
                    lambda m: " ".join(filter(None, (m["verb"], m["particle"], P.THING))),
                    part,
                    count=1,
                )
            credential = P.CREDENTIAL.search(part)
            if credential:
                part = (part[: credential.start()] + part[credential.end() :]).strip(" ,")
            cut = P.CUT_CONDITION.search(part)
            if cut:
                # "text the doctor unless ...": the name would silently lose the condition.
                self.sop.unplaced.append(cut.group("clause").replace(P.THING, self.thing))
            made = make_steps(part, split=False, thing=self.thing, left=self.sop.unplaced)
            if not made:
                self.sop.unplaced.append(part.replace(P.THING, self.thing))
            if credential:
                name = P.credential_name(credential)
                if name is None or len(made) != 1:
                    self.sop.unplaced.append(credential.group(0).strip(" ,()"))
                else:
                    made[0].credential = name
            for step in made:
                if step.name.split()[0].lower() not in P.INSPECTING:
                    self.thing = object_of(step.name) or self.thing
            steps.extend(made)
        if not steps:
            return
        if self.arm is None:
            self._close()
            self.sop.items.extend(steps)
        else:
            self.arm.extend(steps)
        self.last_name = steps[-1].name
        if later:
            for step in make_steps(later.group("later")):
                if self.arm is None:
                    self.sop.items.append(step)
                    self.last_name = step.name
                elif not any(same_name(step.name, s.name) for s in self.later):
                    self.later.append(step)

    def _refers_to_later(self, target: str) -> bool:
        """'move to documents' names a step said to come later ('attach the clinical docs')."""
        wanted = content_words(target)
        return bool(wanted) and any(wanted <= content_words(s.name) for s in self.later)

    def finish(self) -> Sop:
        self._close()
        return self.sop


def _trigger_words(trigger: dict[str, object]) -> str:
    if trigger.get("type") == "cron":
        return f"a schedule ({describe_cron(str(trigger.get('cron_expression', '')))})"
    return "a webhook (when something is sent to it)"


def _arrival_rest(text: str) -> str:
    """What is left of "When a form comes in from ODK Central, save it": "save it"."""
    place = P.ARRIVAL_PLACE.match(text)
    if place:
        text = text[place.end() :]
        while re.match(r"^\s+[A-Z][\w-]*", text):
            text = re.sub(r"^\s+[A-Z][\w-]*", "", text, count=1)
    return text.strip(" ,:")


def parse_sop(body: str) -> Sop:
    reader = _Reader()
    for piece in pieces_of(body):
        reader.read(piece)
    return reader.finish()
