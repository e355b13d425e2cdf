"""seat_security: wrong passwords counted per seat (issue 27)

A mail from a seat's address with a wrong PASSWORD line is counted on the
seat (``player.wrong_passwords``, ``player.last_wrong_password_at``): the
GM is told at the 3rd, 10th, 30th, 100th... and `pbem show` and `pbem
status` list the count. Existing seats start at 0.

And the seat's last applied mail (``last_applied_digest``, a hash of its
text; ``last_applied_seq``, the game's last order-log entry once it was
applied; ``last_applied_logged``, whether it logged orders): the same
text again under a new Message-ID, before anything more is played, is
answered "already applied", not applied twice.

Revision ID: 0005
Revises: 0004
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("player") as batch:
        # The default fills the rows there are; the models give every new row its 0.
        batch.add_column(
            sa.Column("wrong_passwords", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("last_wrong_password_at", sa.DateTime(timezone=True), nullable=True)
        )
        batch.add_column(
            sa.Column("last_applied_digest", sa.String(), nullable=False, server_default="")
        )
        batch.add_column(sa.Column("last_applied_seq", sa.Integer(), nullable=True))
        batch.add_column(
            sa.Column(
                "last_applied_logged", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.drop_column("last_applied_logged")
        batch.drop_column("last_applied_seq")
        batch.drop_column("last_applied_digest")
        batch.drop_column("last_wrong_password_at")
        batch.drop_column("wrong_passwords")
