"""Accepting a workflow document from outside (REST import, PUT)."""

from __future__ import annotations

from collections.abc import Callable

from tools.document import WorkflowDocument
from tools.document.structure import SECTIONS, Draft, UpdateEntry


def mint_missing_ids(doc: WorkflowDocument, new_id: Callable[[], str]) -> int:
    """Give every job, trigger and edge without an id a server-minted one.

    Ids are server-owned: a hand-written document may leave them out, and they
    are filled in once, on the way in. Existing ids are never touched.
    """
    draft = Draft(doc.structure)
    for section in SECTIONS:
        for key, entry in list(draft.structure.section(section).items()):
            if entry.id is None:
                draft.apply(UpdateEntry(section, key, {"id": new_id()}))
    if draft.ops:
        doc.apply(draft.ops, draft.structure)
    return len(draft.ops)
