"""Test runs and fixes: "test it with {...}", "run it", "fix it".

A request to test the workflow becomes one ``test_run`` call whose ``input`` is the
JSON the user gave (a bare object is the run's ``data``; an object with ``data`` is
the whole initial state); without JSON, no input. JSON that does not parse is said
to be so, and nothing runs. "Fix it" with nothing to fix (no validation errors from
the editor, no failed test run in the session) says so; with either, the planner's
errors-mode flow answers (:func:`agents.offline.planner.plan`).
"""

from __future__ import annotations

import json
import re

from agents.offline.plan import Outcome, Plan, Reply, call

_WORKFLOW = (
    r"(?:it|this|that|everything|(?:the|this|my|our)\s+(?:whole\s+)?"
    r"(?:workflow|flow|pipeline|process|automation))"
)
_AGAIN = r"(?:\s+(?:again|now|once(?:\s+more)?|for\s+me|out|through))*"
# The sample starts with "{" or "[" (a "[" is refused as not an object): "run it on
# weekends at 10" is a schedule, never a sample.
_SAMPLE = (
    r"(?:\s*(?:,\s*)?(?:with|on|using|against|for|:)\s*(?:(?:this|the|a)\s+)?"
    r"(?:sample|input|data|payload|record|example)?\s*:?\s*(?P<sample>[\[{].*))?"
)
_TEST_RUN = (
    # test it / test the workflow / test-run it / dry run it / test (with {...})
    re.compile(
        rf"^(?:test(?:[- ]?run)?|dry[- ]?run|trial[- ]run)(?:\s+{_WORKFLOW})?{_AGAIN}{_SAMPLE}$",
        re.I | re.S,
    ),
    # try running it / start testing the workflow
    re.compile(
        rf"^(?:try|start|begin)\s+(?:running|testing|test[- ]running|executing)"
        rf"(?:\s+{_WORKFLOW})?{_AGAIN}{_SAMPLE}$",
        re.I | re.S,
    ),
    # run it / try it (out) / execute the workflow: these verbs need their object
    re.compile(rf"^(?:run|try|execute|exercise)\s+{_WORKFLOW}{_AGAIN}{_SAMPLE}$", re.I | re.S),
    # do a test run / give it a try / run a test (of the workflow)
    re.compile(
        rf"^(?:do|run|start|make|give\s+it|kick\s+off)\s+(?:a|one|another)\s+"
        rf"(?:(?:quick|test|dry|trial)\s+)*(?:test|run|try|go|spin)(?:\s+of\s+{_WORKFLOW})?"
        rf"{_AGAIN}{_SAMPLE}$",
        re.I | re.S,
    ),
    # see if it works / does the workflow work (with {...})
    re.compile(
        rf"^(?:(?:see|check)\s+(?:if|whether)\s+{_WORKFLOW}\s+works|does\s+{_WORKFLOW}\s+work)"
        rf"{_SAMPLE}$",
        re.I | re.S,
    ),
)

FIX = re.compile(
    r"^(?:fix|repair|resolve|correct|debug|solve|sort\s+out|address|deal\s+with)"
    r"(?:\s+(?:it|this|that|them|these|those|everything|what\s+(?:failed|broke|went\s+wrong)"
    r"|(?:the|this|that|these|those)\s+(?:(?:last|failed|failing|broken|test|red)\s+)*"
    r"(?:errors?|problems?|issues?|failures?|bugs?|runs?|tests?(?:\s+runs?)?|workflow|step)))?"
    r"(?:\s+(?:now|for\s+me|then))?$"
    r"|^make\s+(?:it|the\s+(?:test|run|workflow))\s+(?:work|pass|succeed)(?:\s+again)?$"
    r"|^sort\s+(?:it|this|that)\s+out$",
    re.I,
)
"""A request to fix whatever the session reports as broken (errors mode)."""

NOTHING_TO_FIX = (
    "There is nothing to fix that I know of: the editor reports no errors and this session "
    'has no failed test run. Run it first ("test it with {...}"), or tell me what to change.'
)


def test_request(text: str) -> Outcome | None:
    """One ``test_run`` call for a request to test the workflow, or None."""
    match = next((m for p in _TEST_RUN if (m := p.match(text))), None)
    if match is None:
        return None
    sample = match.group("sample")
    if sample is None:
        return Plan([call("test_run")], "Test-running the workflow.")
    try:
        value = json.loads(sample)
    except json.JSONDecodeError as exc:
        return Reply(
            f"That sample is not valid JSON ({exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}), so nothing was run. Give it as a JSON object, e.g. test it with "
            '{"patientId": "p-1"}.'
        )
    if not isinstance(value, dict):
        return Reply(
            "The sample must be a JSON object (the run's data, or a whole state with "
            '"data"), e.g. {"patientId": "p-1"}; nothing was run.'
        )
    state = value if "data" in value else {"data": value}
    return Plan([call("test_run", input=state)], "Test-running the workflow on your sample.")


test_request.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def fix_request(text: str) -> Outcome | None:
    """ "Fix it" when the planner found nothing to fix (errors mode answers otherwise)."""
    return Reply(NOTHING_TO_FIX) if FIX.match(text) else None
