"""sendlog_key: the database is named, for the send log beside a SQLite file (issue 16)

A SQLite database's outbox leases and "sent" marks are kept, while a sender
works, in a small file beside it (pbem/store/sendlog.py). The file must
belong to this very database: it records the random name written here
(service_state ``sendlog_key``), and a log naming another database (one
deleted and made again at the same path) is dropped.

The revision also keeps an older pbem away: a worker from before the send
log would lease in the outbox table only, and could send a mail a newer
worker holds in the log. Such a pbem refuses a database at this revision
("upgrade pbem").

Revision ID: 0004
Revises: 0003
"""

import uuid
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        sa.text(
            "INSERT INTO service_state (key, value) SELECT 'sendlog_key', :name "
            "WHERE NOT EXISTS (SELECT 1 FROM service_state WHERE key = 'sendlog_key')"
        ).bindparams(name=uuid.uuid4().hex)
    )


def downgrade() -> None:
    op.execute("DELETE FROM service_state WHERE key = 'sendlog_key'")
