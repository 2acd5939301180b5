"""Accepting a workflow document from outside (REST import, PUT)."""

from __future__ import annotations

from collections.abc import Callable

from tools.document import WorkflowDocument
from tools.document.reach import duplicate_ids
from tools.document.structure import SECTIONS, Draft, UpdateEntry
from tools.errors import DocumentError


def check_unique_ids(doc: WorkflowDocument) -> None:
    """Refuse a document that gives one id to two entries (jobs, triggers and edges
    together): which one an id names would be a guess, here and in OpenFn."""
    duplicates = duplicate_ids(doc.structure)
    if duplicates:
        listed = "; ".join(f"{id_!r} on {', '.join(where)}" for id_, where in duplicates.items())
        raise DocumentError(
            f"Duplicate ids: {listed}. Every job, trigger and edge needs its own id "
            "(leave an id out to have one minted).",
            code="duplicate_id",
            ids=sorted(duplicates),
        )


def mint_missing_ids(doc: WorkflowDocument, new_id: Callable[[], str]) -> int:
    """Give every job, trigger and edge without an id a server-minted one.

    Ids are server-owned: a hand-written document may leave them out, and they
    are filled in once, on the way in. Existing ids are never touched; a document
    that uses one id twice is refused first (:func:`check_unique_ids`).
    """
    check_unique_ids(doc)
    draft = Draft(doc.structure)
    for section in SECTIONS:
        for key, entry in list(draft.structure.section(section).items()):
            if entry.id is None:
                draft.apply(UpdateEntry(section, key, {"id": new_id()}))
    if draft.ops:
        doc.apply(draft.ops, draft.structure)
    return len(draft.ops)
