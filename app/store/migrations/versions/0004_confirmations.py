"""Confirmations: every question a turn paused on and its answer (who, when, yes or no, feedback).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "confirmations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("turn_id", sa.String(), nullable=False),
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("request_id", sa.String(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("asked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("approved", sa.Boolean(), nullable=True),
        sa.Column("answered_by", sa.String(), nullable=True),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("feedback", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["turn_id"],
            ["turns.id"],
            name=op.f("fk_confirmations_turn_id_turns"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["chat_sessions.id"],
            name=op.f("fk_confirmations_session_id_chat_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_confirmations")),
        sa.UniqueConstraint(
            "turn_id", "request_id", name=op.f("uq_confirmations_turn_id_request_id")
        ),
    )
    op.create_index(op.f("ix_confirmations_turn_id"), "confirmations", ["turn_id"], unique=False)
    op.create_index(
        op.f("ix_confirmations_session_id"), "confirmations", ["session_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_confirmations_session_id"), table_name="confirmations")
    op.drop_index(op.f("ix_confirmations_turn_id"), table_name="confirmations")
    op.drop_table("confirmations")
