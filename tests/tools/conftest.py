"""Fixtures shared by the tool tests: a deterministic tool context, the referral document
(files about loose steps override ``doc``) and a wired chain."""

from __future__ import annotations

import pytest

from tests.tools.helpers import make_context, ok, referral_doc
from tools.base import ToolContext
from tools.document import WorkflowDocument


@pytest.fixture
def ctx() -> ToolContext:
    return make_context()


@pytest.fixture
def doc(ctx: ToolContext) -> WorkflowDocument:
    """webhook -> fetch-referrals -> check-coverage -> notify-team (see ``referral_doc``)."""
    return referral_doc(ctx)


@pytest.fixture
def chain(ctx: ToolContext, doc: WorkflowDocument) -> WorkflowDocument:
    """webhook -> extract -> transform -> load; edge ids 5, 6, 7."""
    ok(
        doc,
        "add_edges",
        {
            "edges": [
                {"source": "webhook", "target": "extract"},
                {"source": "extract", "target": "transform"},
                {"source": "transform", "target": "load"},
            ]
        },
        ctx,
    )
    return doc
