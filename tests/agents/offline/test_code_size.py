"""Code sizes in answers are counted from the document's bodies, never estimated."""

from __future__ import annotations

import pytest

from tests.agents.offline.documents import REFERRAL_YAML
from tests.agents.offline.harness import run_turn
from tools.document import WorkflowDocument

FOURTEEN = "\n".join(
    [
        "// Linda's coverage rules",
        "fn(state => {",
        "  const coverage = state.data.coverage;",
        "",
        "  if (!coverage) {",
        "    throw new Error('no coverage');",
        "  }",
        "  state.status = coverage.status;",
        "  state.copay = coverage.copay;",
        "  state.plan = coverage.plan;",
        "  state.payer = coverage.payer;",
        "  state.exception = coverage.extension;",
        "  state.checked = true;",
        "  state.review = state.exception === 'copay-exception';",
        "  return state;",
        "});",
    ]
)


def _doc() -> WorkflowDocument:
    body = "body: |\n" + "\n".join(f"      {line}" if line else "" for line in FOURTEEN.split("\n"))
    return WorkflowDocument.from_yaml(
        REFERRAL_YAML.replace("body: // Add operations here", body, 1)
    )


@pytest.mark.parametrize(
    "text",
    [
        "how much code does the coverage step have?",
        "How much code does check coverage have",
        "how many lines of code are in check coverage?",
        "how many lines does the coverage step have",
        "how long is the code of check coverage?",
        "what is the line count of check coverage",
    ],
)
def test_code_size_is_counted_from_the_body(text: str) -> None:
    doc = _doc()
    before = doc.to_yaml()
    outcome = run_turn(doc, text)
    assert outcome.tool_calls == []
    assert outcome.doc.to_yaml() == before
    assert '"Check coverage" has 14 lines of code' in outcome.final_text, outcome.final_text


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("tell me about check coverage", "has 14 lines of code"),
        ("what does this workflow do", "Check coverage [fhir, 14 lines of code]"),
        ("describe the workflow", "Get referrals [http, 1 line of code]"),
        ("how much code does send email have", '"Send email" has no code yet'),
    ],
)
def test_other_answers_give_the_same_counts(text: str, says: str) -> None:
    outcome = run_turn(_doc(), text)
    assert says in outcome.final_text, outcome.final_text


def test_code_size_of_an_unknown_step_asks() -> None:
    outcome = run_turn(_doc(), "how much code does the billing step have?")
    assert "no step called" in outcome.final_text
