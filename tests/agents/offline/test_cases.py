"""The offline model through the turn harness, case by case, from the tables in ``data/``
(building, steps, edges, triggers, code, commands, questions, replies, credentials,
gates, runs; the format is in :mod:`tests.agents.offline.cases`), and every example of
every rule of the grammar (the examples agents/offline/README.md shows)."""

from __future__ import annotations

import pytest

from agents.offline.rules import RULES, Example, Rule
from tests.agents.offline.cases import (
    Case,
    check_case,
    check_example,
    check_read_only,
    example_params,
    load_cases,
)

CASES = load_cases()


def test_case_ids_are_unique() -> None:
    # Ids name the parametrised cases: two alike would hide one case behind the other.
    ids = [case.id for case in CASES]
    assert sorted({i for i in ids if ids.count(i) > 1}) == []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_phrasing(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_read_only_never_emits_mutating_tools(case: Case) -> None:
    check_read_only(case)


@pytest.mark.parametrize(("rule", "example", "text"), example_params(RULES))
def test_rule_examples(rule: Rule, example: Example, text: str) -> None:
    check_example(rule, example, text)
