"""notice: the mails decided in a game's transaction, told after its commit

A notice row says who gets which mail about which step, under the stable
Message-ID it will have; the mail itself is rendered and queued in the
outbox after the decision committed (pbem/service/tell/telling.py), which sets
``told_at``. A database upgraded from 0006 has no notices: every mail it
decided before is in its outbox already.

Revision ID: 0007
Revises: 0006
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "notice",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=True),
        sa.Column("recipient", sa.String(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("message_id", sa.String(), nullable=False),
        sa.Column("in_reply_to", sa.String(), nullable=True),
        sa.Column("params_json", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("told_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_notice_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notice")),
        sa.UniqueConstraint("message_id", name=op.f("uq_notice_message_id")),
    )
    op.create_index("ix_notice_told_at", "notice", ["told_at"])


def downgrade() -> None:
    op.drop_index("ix_notice_told_at", table_name="notice")
    op.drop_table("notice")
