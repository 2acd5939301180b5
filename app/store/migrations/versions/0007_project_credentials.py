"""A project's credentials: names, schemas and non-secret fields (never a secret).

``projects.credentials``: JSON list of ``tools.credentials.Credential`` (``name``,
``schema``, ``owner``, ``fields`` such as ``baseUrl``); ``NULL`` until set.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("credentials", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("credentials")
