"""Whole-document writes (``PUT``, revert): nothing recorded when nothing changes,
and a revert that loses a race is retried on the new head.

A ``PUT`` or revert whose text is byte-identical to the head records no version
(and publishes nothing). A revert restores the text of an earlier version, whatever
the current one is. So a revert without ``expected_version`` that loses a race to
another write (another revert, a PUT, a turn) is not stale: it is committed again on
top of the new head, up to :data:`MAX_ATTEMPTS` times (each attempt is one read and
one conditional write, and each lost race means another write won). Twenty
simultaneous reverts then all succeed, in some order, instead of one succeeding and
nineteen getting 409. With ``expected_version`` the caller asked for optimistic
concurrency: a stale one is a 409 as for ``PUT``. When the head already holds exactly
the restored text (another revert to the same version got there first), nothing is
recorded.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.api import Commit
from app.errors import NotFoundError, VersionConflictError
from app.publishing import Publisher
from app.store import Store
from tools.document.structure import Change

MAX_ATTEMPTS = 32
"""Commits tried on successive heads before a revert without ``expected_version`` gives
up with a 409 (the workflow was written more than this many times meanwhile)."""


async def commit_content(
    store: Store,
    publisher: Publisher,
    workflow_id: str,
    *,
    yaml: str,
    name: str | None,
    expected_version: int | None,
    author: str | None,
    tool: str,
    summary: str,
    changes: Sequence[Change],
) -> tuple[int, bool]:
    """Commit ``yaml`` as the next version and publish it. Returns the version that holds
    ``yaml`` and whether it was already there: the new version and ``False``, or the head's
    version and ``True`` when the head already is ``yaml`` byte for byte (nothing recorded).
    Callers answer from this, not from a later read of the head, which a concurrent write
    may already have moved on.

    ``expected_version`` given: only on that version (:class:`VersionConflictError`
    otherwise). ``None``: on whatever the head is, retried on the new head when a
    concurrent write gets in first."""
    attempts = 1 if expected_version is not None else MAX_ATTEMPTS
    attempt = 0
    while True:
        attempt += 1
        head = await store.get_workflow(workflow_id)
        if head is None:
            raise NotFoundError(f"There is no workflow {workflow_id!r}.")
        if head.yaml == yaml:
            return head.version, True
        try:
            base = head.version if expected_version is None else expected_version
            change = Commit(
                yaml=yaml, name=name, base_version=base, tool=tool, changes=changes, summary=summary
            )
            return await publisher.commit_and_publish(workflow_id, change, author=author), False
        except VersionConflictError as exc:
            if expected_version is not None:
                raise
            if attempt == attempts:
                raise VersionConflictError(
                    f"The workflow was changed {attempts} times while this was being "
                    "written; nothing was written. Try again.",
                    **exc.details,
                ) from exc
