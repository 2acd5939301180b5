"""The workflow tree the terminal client draws, and the keys a change touched."""

from __future__ import annotations

import pytest

from app.client.tree import adaptor_text, changed_keys, edge_text, render_tree
from tests.documents import CODED_REFERRAL_DOC
from tools.document.structure import Edge

# Code in two steps, a failure edge, and (added per test) a disabled JS condition.
# Pinned, so the tree shows the version too.
DOC = CODED_REFERRAL_DOC.replace("language-fhir@latest", "language-fhir@4.1.0")
URGENT = (
    "  fetch->alert:\n"
    "    source_job: fetch\n"
    "    target_job: alert\n"
    "    condition_type: js_expression\n"
    "    condition_expression: state.urgent\n"
    "    condition_label: urgent\n"
    "    enabled: false\n"
)


def test_tree_marks_failure_edges_and_shared_steps() -> None:
    lines = render_tree(DOC + URGENT, changed={"alert"})
    assert lines[0] == "Referral intake"
    assert lines[1] == "⚡ webhook trigger (disabled)"
    assert lines[2] == "└─ always → Fetch referral [http, has code]"
    assert lines[3] == "   ├─ on success → Check coverage [fhir 4.1.0, has code]"
    assert lines[4] == "   │  └─ on failure → Alert staff [gmail] *"
    assert lines[5] == "   └─ when urgent (disabled) → ↪ Alert staff (see above)"
    assert lines[-1] == "(* changed)"


def test_tree_of_an_empty_and_of_a_broken_document() -> None:
    assert render_tree("name: Empty\n") == ["Empty", "  (no steps yet)"]
    assert render_tree("jobs: [").pop().startswith("(cannot draw the workflow:")


def test_tree_paints_when_asked() -> None:
    painted = render_tree(DOC, changed={"fetch"}, paint=lambda text, style: f"<{style}>{text}")
    assert painted[0] == "<bold>Referral intake"
    assert "<red>on failure" in painted[4]
    assert painted[2].endswith("<yellow> *")


@pytest.mark.parametrize(
    ("adaptor", "text"),
    [
        ("@openfn/language-http@latest", "http"),
        ("@openfn/language-http", "http"),
        ("@openfn/language-fhir@4.1.0", "fhir 4.1.0"),
        ("language-common@2.0.0", "common 2.0.0"),
    ],
)
def test_adaptor_text(adaptor: str, text: str) -> None:
    assert adaptor_text(adaptor) == text


@pytest.mark.parametrize(
    ("edge", "text"),
    [
        (Edge("a->b", None, "b", source_job="a", condition_type="on_job_success"), "on success"),
        (
            Edge("a->b", None, "b", source_job="a", condition_type="on_job_failure", enabled=False),
            "on failure (disabled)",
        ),
        (
            Edge(
                "a->b",
                None,
                "b",
                source_job="a",
                condition_type="js_expression",
                condition_expression="state.ok",
            ),
            "when state.ok",
        ),
    ],
)
def test_edge_text(edge: Edge, text: str) -> None:
    assert edge_text(edge) == text


def test_changed_keys_are_new_or_different_entries() -> None:
    after = DOC.replace("name: Alert staff", "name: Page the on-call") + URGENT
    assert changed_keys(DOC, after) == {"alert", "fetch->alert"}
    everything = {"fetch", "check", "alert", "webhook", "webhook->fetch", "fetch->check"}
    assert changed_keys("", DOC) == {*everything, "check->alert"}
    assert changed_keys(DOC, "jobs: [") == set()
