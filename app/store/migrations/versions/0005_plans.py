"""Plan mode: a project keeps its plan; sessions and turns may be on a project alone.

``projects.plan`` holds the plan record (JSON: the proposal, its contracts, review
and build status). A session opened on a project without naming a workflow, and
the plan turns it runs, have no workflow: ``workflow_id`` becomes nullable on
``chat_sessions`` and ``turns``.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("plan", sa.Text(), nullable=True))
    for table in ("chat_sessions", "turns"):
        with op.batch_alter_table(table) as batch:
            batch.alter_column("workflow_id", existing_type=sa.String(), nullable=True)


def downgrade() -> None:
    # Project-only sessions and their turns cannot exist without a workflow.
    op.execute("DELETE FROM turns WHERE workflow_id IS NULL")
    op.execute("DELETE FROM chat_sessions WHERE workflow_id IS NULL")
    for table in ("turns", "chat_sessions"):
        with op.batch_alter_table(table) as batch:
            batch.alter_column("workflow_id", existing_type=sa.String(), nullable=False)
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("plan")
