"""Projects (DESIGN §5a): every workflow belongs to one; sessions may be opened on one.

Each workflow that exists before this migration gets a project of its own,
named, owned and dated like the workflow, at position 0.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The tables as this migration sees them (never the models: they move on).
_projects = sa.table(
    "projects",
    sa.column("id", sa.String()),
    sa.column("name", sa.String()),
    sa.column("owner", sa.String()),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("updated_at", sa.DateTime(timezone=True)),
)
_workflows = sa.table(
    "workflows",
    sa.column("id", sa.String()),
    sa.column("project_id", sa.String()),
    sa.column("name", sa.String()),
    sa.column("owner", sa.String()),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("updated_at", sa.DateTime(timezone=True)),
)


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("owner", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
    )
    with op.batch_alter_table("workflows") as batch:
        batch.add_column(sa.Column("project_id", sa.String(), nullable=True))
        batch.add_column(sa.Column("position", sa.Integer(), nullable=False, server_default="0"))
    _one_project_per_workflow()
    with op.batch_alter_table("workflows") as batch:
        batch.alter_column("project_id", existing_type=sa.String(), nullable=False)
        batch.alter_column("position", existing_type=sa.Integer(), server_default=None)
        batch.create_foreign_key(
            op.f("fk_workflows_project_id_projects"),
            "projects",
            ["project_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch.create_unique_constraint(
            op.f("uq_workflows_project_id_position"), ["project_id", "position"]
        )
        batch.create_index(op.f("ix_workflows_project_id"), ["project_id"], unique=False)
    with op.batch_alter_table("chat_sessions") as batch:
        batch.add_column(sa.Column("project_id", sa.String(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_chat_sessions_project_id_projects"),
            "projects",
            ["project_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch.create_index(op.f("ix_chat_sessions_project_id"), ["project_id"], unique=False)


def _one_project_per_workflow() -> None:
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(
            _workflows.c.id,
            _workflows.c.name,
            _workflows.c.owner,
            _workflows.c.created_at,
            _workflows.c.updated_at,
        )
    ).all()
    if not rows:
        return
    homes = [(row, str(uuid.uuid4())) for row in rows]
    # Two executemany statements, not two per workflow.
    connection.execute(
        _projects.insert(),
        [
            {
                "id": project_id,
                "name": row.name,
                "owner": row.owner,
                "created_at": row.created_at,
                "updated_at": row.updated_at,
            }
            for row, project_id in homes
        ],
    )
    connection.execute(
        _workflows.update()
        .where(_workflows.c.id == sa.bindparam("workflow_id"))
        .values(project_id=sa.bindparam("home")),
        [{"workflow_id": row.id, "home": project_id} for row, project_id in homes],
    )


def downgrade() -> None:
    with op.batch_alter_table("chat_sessions") as batch:
        batch.drop_index(op.f("ix_chat_sessions_project_id"))
        batch.drop_constraint(op.f("fk_chat_sessions_project_id_projects"), type_="foreignkey")
        batch.drop_column("project_id")
    with op.batch_alter_table("workflows") as batch:
        batch.drop_index(op.f("ix_workflows_project_id"))
        batch.drop_constraint(op.f("uq_workflows_project_id_position"), type_="unique")
        batch.drop_constraint(op.f("fk_workflows_project_id_projects"), type_="foreignkey")
        batch.drop_column("position")
        batch.drop_column("project_id")
    op.drop_table("projects")
