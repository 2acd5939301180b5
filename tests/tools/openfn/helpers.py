"""Helpers the OpenFn format tests share."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from tests.fixtures import fixture_text

# A credentialed step behind a webhook branching on a labelled js_expression and a
# disabled failure edge, with odd names (ids, slugs and conditions in every export).
BRANCHING = fixture_text("branching.yaml")


def new_ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"00000000-0000-4000-8000-{next(counter):012d}"
