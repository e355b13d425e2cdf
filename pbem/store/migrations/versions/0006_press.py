"""press: every relayed press message as a row, the site's only source of press;
game.hash_version: keyed state hashes for new games (issue 27)

The site used to find press sent to all players by reading the outbox's
mail text for "NAME writes to all players:", a line anyone could write into
a private press body. From this revision the site reads the ``press`` table,
filled by notify.relay_press. Press relayed before it is not carried over:
its mail text cannot tell a public message from a private one that quotes
the line, so it stays off the site (docs/STORE.md).

``game.hash_version`` says what a game's state hashes are: 1 (every game
stored before this revision: the SHA-256 of the state, against which a player
could test guesses of the hidden hands and missions) or 2 (new games: keyed by
the game's secret). Existing games keep 1, so their stored hashes, reports and
records keep their meaning.

Revision ID: 0006
Revises: 0004
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "press",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("sender_seat", sa.Integer(), nullable=True),
        sa.Column("sender_name", sa.String(), nullable=False),
        sa.Column("anonymous", sa.Boolean(), nullable=False),
        sa.Column("to_all", sa.Boolean(), nullable=False),
        sa.Column("recipients_json", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_press_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_press")),
        sa.UniqueConstraint("key", name=op.f("uq_press_key")),
    )
    op.create_index("ix_press_game_id", "press", ["game_id"])
    with op.batch_alter_table("game") as batch:
        batch.add_column(
            sa.Column("hash_version", sa.Integer(), nullable=False, server_default="1")
        )


def downgrade() -> None:
    with op.batch_alter_table("game") as batch:
        batch.drop_column("hash_version")
    op.drop_index("ix_press_game_id", table_name="press")
    op.drop_table("press")
