"""Hypothesis strategies for YAML text and scalars, and derandomized sampling, shared by the
fast emitter and fast loader tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

# Characters with a rule of their own in YAML: indicators, quotes, spaces, breaks,
# a tab, non-ASCII and a character that must be escaped.
TRICKY = "aZ09 _-:#,[]{}&*!|>'\"%@`?./\\\n\t\u00e9\u2028\x07~=+;()"

# Mostly names and code that need no quoting, so the direct path is taken often.
MILD = "abcXYZ019 _->.()';{}/@$\u00e9"
mild = st.text(alphabet=MILD, min_size=1, max_size=14)

# Built, not filtered: a filter on ``mild`` gave up on a tenth of the examples.
mild_name = st.tuples(st.sampled_from("abcXYZ019\u00e9"), mild).map(
    lambda p: (p[0] + p[1][:-1]).rstrip(" ")
)
texts = (
    mild_name
    | mild
    | mild.map(lambda s: s + "\n" + s)
    | st.text(alphabet=TRICKY, max_size=12)
    | st.sampled_from(
        ["yes", "true", "null", "~", "12", "1e3", "0o7", "2024-01-01", "---", "...", "a: b", "x #y"]
    )
)
names = st.from_regex(r"[a-z][a-z0-9_>-]{0,10}", fullmatch=True)
keys = names | texts
scalars = st.one_of(
    texts,
    texts.map(SingleQuotedScalarString),
    texts.map(LiteralScalarString),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    # Never written directly: still never written wrong.
    st.one_of(
        texts.map(DoubleQuotedScalarString),
        st.none(),
        st.floats(allow_nan=False, allow_infinity=False),
    ),
)

T = TypeVar("T")


def sample(check: Callable[..., T], n: int, **strategies: st.SearchStrategy[Any]) -> list[T]:
    """``check``'s answers for ``n`` examples of ``strategies``, the same examples on
    every run (derandomized, no database): a share of them asserted on cannot flake."""
    answers: list[T] = []

    @settings(
        max_examples=n, deadline=None, database=None, derandomize=True, phases=[Phase.generate]
    )
    @given(**strategies)
    def run(**example: Any) -> None:
        answers.append(check(**example))

    run()
    return answers
