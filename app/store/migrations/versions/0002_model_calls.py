"""Usage and cost (DESIGN §5b): a row per model call, cache tokens, cost and prompts per turn.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.add_column(
            sa.Column(
                "cache_creation_input_tokens", sa.Integer(), nullable=False, server_default="0"
            )
        )
        batch.add_column(
            sa.Column("cache_read_input_tokens", sa.Integer(), nullable=False, server_default="0")
        )
        # Turns recorded before this migration had no cost: unknown, not free.
        batch.add_column(sa.Column("cost_usd", sa.Float(), nullable=True))
        batch.add_column(sa.Column("prompts", sa.Text(), nullable=False, server_default="{}"))
    op.create_table(
        "model_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("turn_id", sa.String(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_creation_input_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_read_input_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("prompt_name", sa.String(), nullable=True),
        sa.Column("prompt_version", sa.String(), nullable=True),
        sa.Column("prompt_hash", sa.String(), nullable=True),
        sa.Column("error", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "role IN ('router', 'planner', 'job_code')", name=op.f("ck_model_calls_role")
        ),
        sa.ForeignKeyConstraint(
            ["turn_id"],
            ["turns.id"],
            name=op.f("fk_model_calls_turn_id_turns"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_model_calls")),
        sa.UniqueConstraint("turn_id", "seq", name=op.f("uq_model_calls_turn_id_seq")),
    )
    op.create_index(op.f("ix_model_calls_turn_id"), "model_calls", ["turn_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_model_calls_turn_id"), table_name="model_calls")
    op.drop_table("model_calls")
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("prompts")
        batch.drop_column("cost_usd")
        batch.drop_column("cache_read_input_tokens")
        batch.drop_column("cache_creation_input_tokens")
