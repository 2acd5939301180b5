"""Reading a structured spec into a project plan (plan mode, offline; agents/offline/README.md,
"Plan mode: the spec format").

A spec is an optional title line and intro, then one section per process: a
markdown heading (``## Coverage check``) or a numbered line on its own
(``1. Coverage check``), followed by its steps (a list or sentences). Lines of a
section say more than steps:

* ``Purpose: ...`` (or prose before the list, or a sentence in the third person,
  "Checks the member's coverage.") is the purpose; otherwise the first step is;
* ``Every day at 7.`` / ``Schedule: each Monday at 9`` make it a cron workflow
  (the offline schedule parser reads them); the default is a webhook;
* ``After Intake.`` / ``Uses Intake's result.`` / ``Once Intake is done.`` /
  ``Depends on: Intake, Coverage check`` make it depend on other sections, named
  by heading or key; a heading may say it in brackets: ``## Coverage check (after
  Intake)``;
* ``Inputs: ...`` / ``Outputs: ...`` name the data; without them a dependent
  receives "<X> result" and X hands it over, so the contracts say something.

Precise or silent: what is not such a structure (fewer than two sections, a
section without steps, a line that fits nowhere, a dependency on a section that
does not exist, a cycle) is refused with what was understood and the format that
is expected, and nothing changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import ValidationError

from agents.offline import spec_patterns as P
from agents.offline.grammar import fit_name, imperative, name_note, norm, oxford
from agents.offline.schedule import describe_cron, find_schedule
from agents.offline.sop_patterns import WEBHOOK as SOP_WEBHOOK
from agents.offline.spec_layout import Problems, Section, blocks, lookup_all, split
from agents.offline.spec_review import read_review
from tools.plan import PlannedTrigger, PlannedWorkflow, ProjectPlan, check_plan
from tools.plan.model import MAX_WORKFLOWS, leaf_first_order

FORMAT_HELP = (
    "Write the spec as one section per process: a heading on its own line "
    '("## Coverage check", or "1. Coverage check"), then its steps, one per line or '
    'sentence. In a section, "Every day at 7." sets a schedule (the default is a webhook), '
    '"After Intake." or "Uses Intake\'s result." names a process it depends on, and '
    '"Purpose:", "Inputs:" and "Outputs:" lines describe it. The format is described in '
    'agents/offline/README.md, "Plan mode: the spec format".'
)


@dataclass(frozen=True)
class Refusal:
    """The text could not be read as a plan (or a revision): say why; nothing changes."""

    text: str


def read_spec_noted(
    text: str, project_slug: str = "", *, known: ProjectPlan | None = None
) -> tuple[ProjectPlan | Refusal, list[str]]:
    """:func:`read_spec`, and what each heading's name became to fit OpenFn's name rule
    (:func:`.grammar.name_note`), when one had to change."""
    outcome = read_spec(text, project_slug, known=known)
    if not isinstance(outcome, ProjectPlan):
        return outcome, []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    names = {norm(w.name): w.key for w in known.workflows} if known is not None else {}
    typed = {s.key: s.name for s in split(lines, names)[2]}
    notes = [name_note(typed[w.key], w.name) for w in outcome.workflows if w.key in typed]
    return outcome, [n for n in notes if n]


def read_spec(
    text: str, project_slug: str = "", *, known: ProjectPlan | None = None
) -> ProjectPlan | Refusal:
    """The plan a structured spec describes, or a refusal. Keys come from the headings
    (never from ``project_slug`` or the position), so the same heading keeps its key
    across revisions and :func:`tools.plan.plan_delta` compares like with like; a heading
    that is the name of a workflow of ``known`` (the plan the project was built from)
    keeps that workflow's key, also after a rename. The slug only shapes webhook paths,
    through :func:`tools.plan.contracts`."""
    del project_slug
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    names = {norm(w.name): w.key for w in known.workflows} if known is not None else {}
    title, intro, sections, problems = split(lines, names)
    if len(sections) > MAX_WORKFLOWS:
        problems.insert(0, f"A plan has at most {MAX_WORKFLOWS} workflows.")
        return _refusal(title, intro, sections, problems)
    for section in sections:
        _read_section(section, sections, problems)
    if len(sections) < 2:
        found = "one process section" if sections else "no process sections"
        problems.insert(0, f"I found {found}; a plan needs at least two.")
    if problems:
        return _refusal(title, intro, sections, problems)
    plan = _plan(title, intro, sections, problems)
    if plan is None:
        return _refusal(title, intro, sections, problems)
    checked = check_plan(plan)
    if checked:
        return _refusal(title, intro, sections, [p.message for p in checked])
    return plan


# --------------------------------------------------------------------------- sections


def _read_section(section: Section, sections: list[Section], problems: Problems) -> None:
    if section.note:
        _read_unit(section, section.note, sections, problems, intro=True, item=False)
    found = blocks(section.lines)
    first_item = next((b.row for b in found if b.item), None)
    for block in found:
        labelled = P.LABELLED.match(block.text) is not None
        # A labelled line is one unit ("Purpose: ..." of two sentences is the purpose).
        units = [block.text] if labelled else P.SENTENCE_SPLIT.split(block.text)
        # Prose over a list describes the process; the list is its steps.
        intro = not block.item and first_item is not None and block.row < first_item
        for unit in units:
            unit = unit.strip().rstrip(".").strip()
            if unit:
                _read_unit(section, unit, sections, problems, intro=intro, item=block.item)
    if not section.steps:
        problems.add(f'The section "{section.name}" has no steps.')


def _read_unit(
    section: Section,
    unit: str,
    sections: list[Section],
    problems: Problems,
    *,
    intro: bool,
    item: bool,
) -> None:
    labelled = P.LABELLED.match(unit)
    if labelled:
        _labelled(
            section,
            P.LABELS[" ".join(labelled["label"].lower().split())],
            labelled,
            sections,
            problems,
        )
        return
    review = read_review(section, unit, lambda ref: _refs(ref, sections), problems.add)
    if review or _dependency(section, unit, sections, problems):
        return
    if _trigger(section, unit, problems):
        return
    if intro or (not item and not section.steps and _describes(unit)):
        section.description.append(unit)
        return
    _step(section, unit, sections)


def _labelled(
    section: Section,
    kind: str,
    match: re.Match[str],
    sections: list[Section],
    problems: Problems,
) -> None:
    value = match.group("value").strip().rstrip(".")
    if kind == "steps":
        for sentence in P.SENTENCE_SPLIT.split(value) if value else []:
            _step(section, sentence.strip().rstrip("."), sections)
        return
    if not value:
        problems.add(f'"{match.group(0)}" in "{section.name}" says nothing after the colon.')
    elif kind == "purpose":
        section.purpose = value
    elif kind == "trigger":
        if not _trigger(section, value, problems):
            problems.add(
                f'In "{section.name}", I could not read the trigger "{value}" (say e.g. '
                '"Schedule: every day at 7" or "Trigger: webhook").'
            )
    elif kind == "depends":
        refs = _refs(value, sections)
        if refs is None:
            problems.add(_unknown(section, value, sections))
        else:
            section.depends += [(key, None) for key in refs]
    else:
        items = [v.strip() for v in P.LIST_SPLIT.split(value) if v.strip()]
        setattr(section, kind, [*(getattr(section, kind) or []), *items])


def _dependency(section: Section, unit: str, sections: list[Section], problems: Problems) -> bool:
    """A sentence that names the sections this one depends on (True: it was one)."""
    for pattern in (P.AFTER, P.ONCE, P.DEPENDS):
        match = pattern.match(unit)
        if match is None:
            continue
        ref = match.group("ref")
        refs = _refs(ref, sections)
        head, comma, tail = ref.partition(",")
        if refs is None and comma and tail.strip() and pattern is not P.DEPENDS:
            # "After Intake, check the coverage": a dependency and a step. "After that,
            # save it" is a step as said (no section is called "that").
            first = _refs(head, sections)
            if first is None:
                return False
            section.depends += [(key, None) for key in first]
            _step(section, tail.strip(), sections)
            return True
        if refs is None:
            problems.add(_unknown(section, ref, sections))
        else:
            section.depends += [(key, None) for key in refs]
        return True
    uses = P.USES.match(unit)
    if uses is None:
        return False
    # "Uses X's result", "the result of X" and "Uses the X result" (a statement about
    # the process) must name a section; "Use the API result" (an imperative) and "uses
    # the token from the config" may be a step or a description.
    statement = uses.group("verb").lower().endswith(("s", "on"))
    strict = bool(uses.group("ref") or uses.group("ref2") or (uses.group("ref4") and statement))
    ref = next(uses.group(g) for g in ("ref", "ref2", "ref3", "ref4") if uses.group(g))
    data = next(uses.group(g) for g in ("data", "data2", "data3", "data4") if uses.group(g))
    refs = _refs(ref, sections)
    if refs is None:
        if strict:
            problems.add(_unknown(section, ref, sections))
            return True
        return False  # "Use the token from the config": a step.
    named = None if P.GENERIC_DATA.match(data.strip()) else data.strip()
    section.depends += [(key, named) for key in refs]
    return True


def _trigger(section: Section, unit: str, problems: Problems) -> bool:
    """A sentence that says how the workflow starts (True: it was one)."""
    arrival = "," not in unit and SOP_WEBHOOK.match(unit) is not None
    if P.WEBHOOK_LINE.match(unit) or arrival:
        # "Runs on a webhook", "When a referral arrives", "Trigger: webhook".
        _set_trigger(section, PlannedTrigger(type="webhook"), problems)
        return True
    schedule = find_schedule(unit)
    if schedule is None:
        return False
    before, after = unit[: schedule.start], unit[schedule.end :]
    cron = PlannedTrigger(type="cron", cron_expression=schedule.cron)
    if P.RUN_WORDS.match(before) and P.RUN_WORDS.match(after):
        _set_trigger(section, cron, problems)
        return True
    rest = after.lstrip(" ,:").strip()
    if P.RUN_WORDS.match(before) and rest:
        # "Every day at 7, fetch the open referrals": the schedule, then a step.
        _set_trigger(section, cron, problems)
        _step(section, rest, [])
        return True
    problems.add(
        f'In "{section.name}", "{unit}" has a schedule inside a step: put the schedule on a '
        'line of its own ("Every day at 7.").'
    )
    return True


def _set_trigger(section: Section, trigger: PlannedTrigger, problems: Problems) -> None:
    if section.trigger is not None and section.trigger != trigger:
        problems.add(f'"{section.name}" is given two different triggers.')
    section.trigger = trigger


def _describes(unit: str) -> bool:
    """'Receives new referrals' or 'Referrals arrive ...' (a statement, not an imperative)
    describes the process; 'Check ...' is a step."""
    if P.DESCRIPTION_START.match(unit):
        return True
    first = unit.split()[0]
    return first.isalpha() and imperative(first).lower() != first.lower()


def _step(section: Section, unit: str, sections: list[Section]) -> None:
    section.steps.append(unit)
    for match in P.POSSESSIVE.finditer(unit):
        refs = _refs(match.group("ref"), sections) if sections else None
        if refs is not None:
            section.depends += [(key, None) for key in refs if key != section.key]


def _refs(text: str, sections: list[Section]) -> list[str] | None:
    """The keys a reference names ('Intake and Coverage check'), or None if any is unknown."""
    found, unknown = lookup_all(sections, text)
    return None if unknown else [s.key for s in found]


def _unknown(section: Section, ref: str, sections: list[Section]) -> str:
    names = oxford([f'"{s.name}"' for s in sections])
    return (
        f'"{section.name}" depends on "{ref.strip()}", but no section is called that '
        f"(the sections are {names})."
    )


# --------------------------------------------------------------------------- the plan


def _plan(
    title: str | None, intro: list[str], sections: list[Section], problems: Problems
) -> ProjectPlan | None:
    by_key = {s.key: s for s in sections}
    handed: dict[str, list[str]] = {s.key: [] for s in sections}
    received: dict[str, list[str]] = {s.key: [] for s in sections}
    for section in sections:
        for dep, data in section.depends:
            source = by_key[dep]
            items = [data] if data else (source.outputs or [f"{source.name} result"])
            handed[dep] += items
            received[section.key] += items
    workflows = []
    try:
        for section in sections:
            outputs = [*(section.outputs or []), *handed[section.key]]
            inputs = section.inputs if section.inputs is not None else received[section.key]
            workflows.append(
                PlannedWorkflow(
                    key=section.key,
                    # The name the built workflow will have (a document rule).
                    name=fit_name(section.name) or section.key,
                    purpose=_purpose(section),
                    trigger=section.trigger or PlannedTrigger(type="webhook"),
                    inputs=list(dict.fromkeys(inputs)),
                    outputs=list(dict.fromkeys(outputs)),
                    depends_on=list(dict.fromkeys(dep for dep, _ in section.depends)),
                    review_by=section.review_by,
                    steps=section.steps,
                )
            )
        return ProjectPlan(
            summary=_summary(title, intro, sections),
            workflows=workflows,
            order=leaf_first_order(workflows),
        )
    except ValidationError as error:
        for detail in error.errors():
            where = ".".join(str(p) for p in detail["loc"])
            problems.add(f"The plan is not valid at {where}: {detail['msg']}.")
        return None


def _purpose(section: Section) -> str:
    text = section.purpose or " ".join(f"{d}." for d in section.description)
    text = text or section.steps[0]
    text = text.strip()
    if len(text) > 500:
        first = P.SENTENCE_SPLIT.split(text)[0]
        text = first if len(first) <= 500 else text[:497].rstrip() + "..."
    return text if text.endswith((".", "!", "?")) else text + "."


def _summary(title: str | None, intro: list[str], sections: list[Section]) -> str:
    names = oxford([s.name for s in sections])
    text = f"{title or 'The spec'} as {len(sections)} workflows: {names}."
    if intro:
        text += " " + " ".join(intro)
    return text if len(text) <= 1000 else text[:997].rstrip() + "..."


# --------------------------------------------------------------------------- refusals


def _refusal(
    title: str | None, intro: list[str], sections: list[Section], problems: list[str]
) -> Refusal:
    understood: list[str] = []
    if title:
        understood.append(f'- the title "{title}"')
    if intro:
        where = "before the first section" if sections else "in no section"
        lines = f"{len(intro)} line{'s' if len(intro) != 1 else ''}"
        understood.append(f"- {lines} of text {where} (read as the plan's summary)")
    for section in sections:
        understood.append(f'- the section "{section.name}"{_shown(section)}')
    seen = "\n".join(understood) if understood else "- no title and no sections"
    issues = "\n".join(f"- {p}" for p in problems)
    return Refusal(
        "I couldn't read that as a plan of several workflows, so nothing was changed.\n\n"
        f"This is what I understood:\n{seen}\n\nWhat stopped me:\n{issues}\n\n{FORMAT_HELP}"
    )


def _shown(section: Section) -> str:
    parts = []
    if section.steps:
        parts.append(f"{len(section.steps)} step{'s' if len(section.steps) != 1 else ''}")
    if section.trigger is not None and section.trigger.cron_expression:
        parts.append(describe_cron(section.trigger.cron_expression))
    if section.depends:
        parts.append("after " + ", ".join(dict.fromkeys(d for d, _ in section.depends)))
    return f" ({'; '.join(parts)})" if parts else ""
