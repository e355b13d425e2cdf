"""claims, leases and retention: the exactly-once poll (issue 12)

inbound_message: the row is the claim of a mail (lease_owner, lease_until),
with its failed attempts and backoff; a mail is known by Message-ID and a
content hash (a reused Message-ID with other content is another mail);
raw bytes may be compressed (raw_format). outbox: leased before sending,
pruned to headers after the retention period (raw_sha256 keeps the proof).

Revision ID: 0002
Revises: 0001
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_RAW_FORMATS = "raw_format IN ('plain', 'zlib', 'pruned')"
_INBOUND_NEW = "status IN ('new', 'claimed', 'processed', 'rejected', 'duplicate', 'held')"
_INBOUND_OLD = "status IN ('new', 'processed', 'rejected', 'duplicate')"


def upgrade() -> None:
    with op.batch_alter_table("inbound_message") as batch:
        batch.add_column(sa.Column("content_hash", sa.String(), nullable=False, server_default=""))
        batch.add_column(
            sa.Column("raw_format", sa.String(), nullable=False, server_default="plain")
        )
        batch.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("last_error", sa.Text(), nullable=True))
        batch.add_column(sa.Column("lease_owner", sa.String(), nullable=True))
        batch.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
        batch.drop_constraint(op.f("uq_inbound_message_message_id"), type_="unique")
        batch.create_unique_constraint(
            op.f("uq_inbound_message_message_id_content_hash"), ["message_id", "content_hash"]
        )
        batch.drop_constraint(op.f("ck_inbound_message_status"), type_="check")
        batch.create_check_constraint(op.f("ck_inbound_message_status"), _INBOUND_NEW)
        batch.create_check_constraint(op.f("ck_inbound_message_raw_format"), _RAW_FORMATS)
        batch.create_index("ix_inbound_message_message_id", ["message_id"])
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(
            sa.Column("raw_format", sa.String(), nullable=False, server_default="plain")
        )
        batch.add_column(sa.Column("raw_sha256", sa.String(), nullable=False, server_default=""))
        batch.add_column(sa.Column("lease_owner", sa.String(), nullable=True))
        batch.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
        batch.create_check_constraint(op.f("ck_outbox_raw_format"), _RAW_FORMATS)
    # The defaults were for the rows already there; the models give every value.
    with op.batch_alter_table("inbound_message") as batch:
        batch.alter_column("content_hash", server_default=None)
        batch.alter_column("raw_format", server_default=None)
        batch.alter_column("attempts", server_default=None)
    with op.batch_alter_table("outbox") as batch:
        batch.alter_column("raw_format", server_default=None)
        batch.alter_column("raw_sha256", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.drop_constraint(op.f("ck_outbox_raw_format"), type_="check")
        for column in ("lease_until", "lease_owner", "raw_sha256", "raw_format"):
            batch.drop_column(column)
    with op.batch_alter_table("inbound_message") as batch:
        batch.drop_index("ix_inbound_message_message_id")
        batch.drop_constraint(op.f("ck_inbound_message_raw_format"), type_="check")
        batch.drop_constraint(op.f("ck_inbound_message_status"), type_="check")
        batch.create_check_constraint(op.f("ck_inbound_message_status"), _INBOUND_OLD)
        batch.drop_constraint(op.f("uq_inbound_message_message_id_content_hash"), type_="unique")
        batch.create_unique_constraint(op.f("uq_inbound_message_message_id"), ["message_id"])
        for column in (
            "lease_until",
            "lease_owner",
            "last_error",
            "next_attempt_at",
            "attempts",
            "raw_format",
            "content_hash",
        ):
            batch.drop_column(column)
