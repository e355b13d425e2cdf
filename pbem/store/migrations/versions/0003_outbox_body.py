"""outbox_body: the outbox's mail body in a table of its own (issue 16)

SQLite rewrites a row's whole payload, overflow pages included, whenever
one of its columns changes size; with the ~35 KB compressed mail in the
outbox row, every lease and every mark-as-sent wrote it to the WAL again.
The body moves to outbox_body (one row per outbox row, same id); outbox
keeps the small columns the sender changes, and raw_sha256.

Revision ID: 0003
Revises: 0002
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_RAW_FORMATS = "raw_format IN ('plain', 'zlib', 'pruned')"


def upgrade() -> None:
    op.create_table(
        "outbox_body",
        sa.Column("outbox_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("raw_format", sa.String(), nullable=False),
        sa.CheckConstraint(_RAW_FORMATS, name=op.f("ck_outbox_body_raw_format")),
        sa.ForeignKeyConstraint(
            ["outbox_id"], ["outbox.id"], name=op.f("fk_outbox_body_outbox_id_outbox")
        ),
        sa.PrimaryKeyConstraint("outbox_id", name=op.f("pk_outbox_body")),
    )
    op.execute(
        "INSERT INTO outbox_body (outbox_id, raw, raw_format) "
        "SELECT id, raw, raw_format FROM outbox"
    )
    with op.batch_alter_table("outbox") as batch:
        batch.drop_constraint(op.f("ck_outbox_raw_format"), type_="check")
        batch.drop_column("raw_format")
        batch.drop_column("raw")


def downgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        # Filled from outbox_body below; the default only serves the moment between.
        batch.add_column(sa.Column("raw", sa.LargeBinary(), nullable=False, server_default=""))
        batch.add_column(
            sa.Column("raw_format", sa.String(), nullable=False, server_default="plain")
        )
        batch.create_check_constraint(op.f("ck_outbox_raw_format"), _RAW_FORMATS)
    op.execute(
        "UPDATE outbox SET "
        "raw = (SELECT b.raw FROM outbox_body b WHERE b.outbox_id = outbox.id), "
        "raw_format = (SELECT b.raw_format FROM outbox_body b WHERE b.outbox_id = outbox.id) "
        "WHERE EXISTS (SELECT 1 FROM outbox_body b WHERE b.outbox_id = outbox.id)"
    )
    with op.batch_alter_table("outbox") as batch:
        batch.alter_column("raw", server_default=None)
        batch.alter_column("raw_format", server_default=None)
    op.drop_table("outbox_body")
