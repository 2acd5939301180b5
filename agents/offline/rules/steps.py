"""Step commands: rename, change adaptor, remove (:mod:`agents.offline.edits`),
then move and add (:mod:`agents.offline.steps`).

Adding comes last: "add ..." would otherwise take any unknown command's words as
a new step's name.
"""

from __future__ import annotations

from agents.offline import edits, moves, steps
from agents.offline.rules.base import Example, Rule, parser

_ADD = ("add_jobs", "update_edges", "add_edges")
_MOVE = ("remove_edges", "update_edges", "add_edges")


def _rule(name: str, parse: edits.Rule, *examples: Example) -> Rule:
    return Rule(name, "steps", "command", parser(parse), (), examples)


RULES = [
    _rule(
        "rename",
        edits.rename,
        Example(
            "rename 'Send SMS' to 'Text patient'",
            "`update_jobs` name (the key stays)",
            ("update_jobs",),
            menu="rename A to B",
        ),
        Example(
            "rename the key of Send SMS to text-patient",
            "`update_jobs` new_key (edges follow)",
            ("update_jobs",),
        ),
        Example("rename the workflow to Intake v2", "`update_workflow`", ("update_workflow",)),
    ),
    _rule(
        "change_adaptor",
        edits.change_adaptor,
        Example(
            "switch send email to msgraph",
            "`update_jobs` adaptor (a pin stays unless a version is given)",
            ("update_jobs",),
            also=("use salesforce for get referrals", "check coverage should use fhir@5.0.15"),
            menu="change A to use fhir",
        ),
    ),
    _rule(
        "remove",
        edits.remove,
        Example(
            "remove transform data",
            "`remove_jobs` + `add_edges` joining its single parent to its single child",
            ("remove_jobs", "add_edges"),
            doc="chain",
            menu="remove A",
        ),
        Example(
            "delete send email and send sms",
            "`remove_jobs` (removing a step with code asks for confirmation first)",
            ("remove_jobs",),
            also=("get rid of send sms",),
        ),
    ),
    _rule(
        "move",
        moves.move,
        Example(
            "move upsert records before transform data",
            "edge changes only",
            _MOVE,
            doc="chain",
            menu="move A after B",
        ),
        Example(
            "move fetch patients to the end",
            "edge changes only",
            _MOVE,
            doc="chain",
        ),
        Example(
            "move upsert records between fetch patients and transform data",
            "edge changes only",
            _MOVE,
            doc="chain",
        ),
        Example(
            "move send sms before send email",
            "a move that would drop or carry over a branch (a failure or JS edge, several "
            "edges in or out, a step moved below its own branch) changes nothing: it says why "
            "and exactly which edges it would change",
            (),
            says=("runs after", "on failure", "I changed nothing"),
        ),
    ),
    _rule(
        "add",
        steps.add,
        Example(
            "add a dedupe step after get referrals",
            "`add_jobs`, `update_edges` (the edge after Get referrals now leads to Dedupe, "
            "keeping its id and condition), `add_edges` Dedupe → next",
            _ADD,
            menu="add a step called Dedupe after Fetch patients",
        ),
        Example(
            "add a step called 'Dedupe referrals' before check coverage",
            "the same, on the edges into Check coverage (including a trigger's)",
            _ADD,
        ),
        Example(
            "insert Validate patients between fetch patients and transform data",
            "retarget that edge, then Validate → Transform",
            _ADD,
            doc="chain",
            menu="insert Validate between A and B",
        ),
        Example(
            "add an http step called Ping monitor at the start",
            "before the first step",
            _ADD,
            doc="chain",
        ),
        Example(
            "append a step called Notify admin using gmail",
            "after the only last step",
            ("add_jobs", "add_edges"),
            doc="chain",
        ),
        Example(
            "add a step that texts the patient with twilio if check coverage fails",
            "a new branch: one on-failure edge, nothing rewired",
            ("add_jobs", "add_edges"),
            also=("add an alert step with gmail after check coverage on failure",),
        ),
        Example(
            "add a step called Notify team with the slack-bot credential after send email",
            "`add_jobs`, `add_edges`, then `attach_credential` on the new step",
            ("add_jobs", "add_edges", "attach_credential"),
        ),
        Example(
            "insert a step to send an SMS with twilio after upsert records",
            'name from the verb phrase ("Send SMS"), adaptor from "with twilio"',
            ("add_jobs", "add_edges"),
            doc="chain",
        ),
    ),
]
