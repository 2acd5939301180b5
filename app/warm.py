"""Parsed documents kept between turns, so the next turn neither parses nor emits them.

A 200-step workflow takes ~150 ms to parse; the last turn, a REST write or an import
leaves its document parsed here at the version it committed, and the next turn on
that workflow takes it if it is still exactly the committed text. Only a cache:
anything missing or stale is parsed again, off the event loop.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

from app.offload import off_loop
from tools.document import WorkflowDocument

log = logging.getLogger(__name__)

WARM_DOCUMENTS = 64
"""Parsed documents kept, most recently used first out of the way last."""


class WarmDocuments:
    """Workflow id -> (parsed document, committed version), least recently used dropped."""

    def __init__(self, size: int = WARM_DOCUMENTS) -> None:
        self.size = size
        """How many documents are kept at most."""
        self._kept: OrderedDict[str, tuple[WorkflowDocument, int]] = OrderedDict()

    def __contains__(self, workflow_id: object) -> bool:
        return workflow_id in self._kept

    def __getitem__(self, workflow_id: str) -> tuple[WorkflowDocument, int]:
        return self._kept[workflow_id]

    def get(self, workflow_id: str) -> tuple[WorkflowDocument, int] | None:
        """The document kept for ``workflow_id`` and its version, left kept."""
        return self._kept.get(workflow_id)

    def keep(self, workflow_id: str, doc: WorkflowDocument, version: int) -> None:
        """Offer ``doc``, parsed at committed ``version``, to the next turn (hand over a
        document nothing else touches)."""
        self._kept[workflow_id] = (doc, version)
        self._kept.move_to_end(workflow_id)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)

    def forget(self, workflow_id: str) -> None:
        """Drop the document kept for ``workflow_id``."""
        self._kept.pop(workflow_id, None)

    def take(self, workflow_id: str, yaml: str, version: int) -> WorkflowDocument | None:
        """The kept document if it is exactly ``yaml`` at ``version`` (its emitted text is
        cached: comparing costs no emission); it is no longer kept either way."""
        warm = self._kept.pop(workflow_id, None)
        if warm is not None and warm[1] == version and warm[0].to_yaml() == yaml:
            return warm[0]
        return None

    async def parse_and_keep(
        self, workflow_id: str, yaml: str, version: int, max_bytes: int
    ) -> None:
        """Parse ``yaml`` in the thread pool and keep it, unless something newer was kept
        meanwhile (a review-mode turn's head: the draft it parsed is never a version)."""
        try:
            doc = await off_loop(_parsed, yaml, max_bytes)
        except Exception:  # only a cache: the next turn parses it itself
            log.warning("could not keep workflow %s parsed", workflow_id, exc_info=True)
            return
        if workflow_id not in self._kept:
            self.keep(workflow_id, doc, version)


def _parsed(yaml: str, max_bytes: int) -> WorkflowDocument:
    """``yaml`` parsed, its text emitted once (cached) so comparing it later is free."""
    doc = WorkflowDocument.from_yaml(yaml, max_bytes=max_bytes)
    doc.to_yaml()
    return doc
