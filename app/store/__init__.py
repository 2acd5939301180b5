"""Persistence: SQLModel tables, Alembic migrations applied on start, the async ``Store``.

Typical start-up::

    engine = create_engine(settings.database_url)  # sqlite:///planwright.db, postgres://...
    await migrate(engine)
    store = Store(engine)
    ...
    await engine.dispose()
"""

from app.errors import ConflictError, NotFoundError, VersionConflictError
from app.store.database import create_engine, migrate, normalise_url
from app.store.records import (
    ConfirmationRecord,
    MessageRecord,
    ModelCallRecord,
    ProjectRecord,
    SessionRecord,
    TurnRecord,
    VersionRecord,
    WorkflowRecord,
)
from app.store.repository import Store

__all__ = [
    "ConfirmationRecord",
    "ConflictError",
    "MessageRecord",
    "ModelCallRecord",
    "NotFoundError",
    "ProjectRecord",
    "SessionRecord",
    "Store",
    "TurnRecord",
    "VersionConflictError",
    "VersionRecord",
    "WorkflowRecord",
    "create_engine",
    "migrate",
    "normalise_url",
]
