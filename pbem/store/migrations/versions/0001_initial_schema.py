"""initial schema: every table of pbem 0.1

Written by autogenerate from pbem/store/models.py, then tidied by hand
(plain op.create_index, no batch blocks: nothing here alters a table).

Revision ID: 0001
Revises:
Create Date: 2026-11-21 15:27:03.362406
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "game",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("map_name", sa.String(), nullable=False),
        sa.Column("map_text", sa.Text(), nullable=False),
        sa.Column("preset", sa.String(), nullable=False),
        sa.Column("options_json", sa.Text(), nullable=False),
        sa.Column("settings_json", sa.Text(), nullable=False),
        sa.Column("dice_version", sa.String(), nullable=False),
        sa.Column("secret", sa.String(), nullable=False),
        sa.Column("commitment", sa.String(), nullable=False),
        sa.Column("secret_revealed", sa.Boolean(), nullable=False),
        sa.Column("phase", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("current_seat", sa.Integer(), nullable=True),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=True),
        sa.Column("winner_seat", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("gm_address", sa.String(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.CheckConstraint(
            "phase IN ('open', 'setup', 'playing', 'over')", name=op.f("ck_game_phase")
        ),
        sa.CheckConstraint(
            "status IN ('running', 'paused', 'finished')", name=op.f("ck_game_status")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_game")),
        sa.UniqueConstraint("name", name=op.f("uq_game_name")),
    )
    op.create_index("ix_game_status_deadline", "game", ["status", "deadline"])
    op.create_table(
        "mailbox_checkpoint",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("mailbox", sa.String(), nullable=False),
        sa.Column("uidvalidity", sa.BigInteger(), nullable=False),
        sa.Column("last_uid", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mailbox_checkpoint")),
        sa.UniqueConstraint("mailbox", name=op.f("uq_mailbox_checkpoint_mailbox")),
    )
    op.create_table(
        "rate_counter",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rate_counter")),
        sa.UniqueConstraint("key", "window_start", name=op.f("uq_rate_counter_key_window_start")),
    )
    op.create_table(
        "service_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_service_state")),
        sa.UniqueConstraint("key", name=op.f("uq_service_state_key")),
    )
    op.create_table(
        "inbound_message",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.String(), nullable=False),
        sa.Column("checksum", sa.String(), nullable=False),
        sa.Column("mailbox", sa.String(), nullable=False),
        sa.Column("uid", sa.BigInteger(), nullable=True),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("sender", sa.String(), nullable=False),
        sa.Column("subject", sa.String(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("processed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('new', 'processed', 'rejected', 'duplicate')",
            name=op.f("ck_inbound_message_status"),
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["game.id"], name=op.f("fk_inbound_message_game_id_game")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbound_message")),
        sa.UniqueConstraint("message_id", name=op.f("uq_inbound_message_message_id")),
    )
    op.create_index("ix_inbound_message_checksum", "inbound_message", ["checksum"])
    op.create_index("ix_inbound_message_game_id", "inbound_message", ["game_id"])
    op.create_index("ix_inbound_message_status", "inbound_message", ["status"])
    op.create_table(
        "join_request",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("address", sa.String(), nullable=False),
        sa.Column("token", sa.String(), nullable=False),
        sa.Column("confirmed", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["game.id"], name=op.f("fk_join_request_game_id_game")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_join_request")),
        sa.UniqueConstraint("token", name=op.f("uq_join_request_token")),
    )
    op.create_index("ix_join_request_game_id", "join_request", ["game_id"])
    op.create_table(
        "order_entry",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("message_id", sa.String(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "kind IN ('setup', 'turn', 'command')", name=op.f("ck_order_entry_kind")
        ),
        sa.CheckConstraint(
            "source IN ('mail', 'gm', 'default', 'bot')", name=op.f("ck_order_entry_source")
        ),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_order_entry_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_order_entry")),
        sa.UniqueConstraint("game_id", "seq", name=op.f("uq_order_entry_game_id_seq")),
    )
    op.create_index("ix_order_entry_game_id_turn", "order_entry", ["game_id", "turn"])
    op.create_index("ix_order_entry_message_id", "order_entry", ["message_id"])
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.String(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("recipient", sa.String(), nullable=False),
        sa.Column("subject", sa.String(), nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("in_reply_to", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'sent', 'failed')", name=op.f("ck_outbox_status")
        ),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_outbox_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
        sa.UniqueConstraint("message_id", name=op.f("uq_outbox_message_id")),
    )
    op.create_index("ix_outbox_game_id", "outbox", ["game_id"])
    op.create_index("ix_outbox_status_next_attempt_at", "outbox", ["status", "next_attempt_at"])
    op.create_table(
        "pending_orders",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("message_id", sa.String(), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["game.id"], name=op.f("fk_pending_orders_game_id_game")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pending_orders")),
        sa.UniqueConstraint(
            "game_id", "turn", "seat", name=op.f("uq_pending_orders_game_id_turn_seat")
        ),
    )
    op.create_table(
        "player",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("colour", sa.String(), nullable=False),
        sa.Column("address", sa.String(), nullable=False),
        sa.Column("secret_hash", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("missed_in_row", sa.Integer(), nullable=False),
        sa.Column("missed_total", sa.Integer(), nullable=False),
        sa.Column("misses_json", sa.Text(), nullable=False),
        sa.Column("absent_from", sa.DateTime(timezone=True), nullable=True),
        sa.Column("absent_to", sa.DateTime(timezone=True), nullable=True),
        sa.Column("absence_days_used", sa.Integer(), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('active', 'eliminated', 'removed', 'resigned')",
            name=op.f("ck_player_status"),
        ),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_player_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_player")),
        sa.UniqueConstraint("game_id", "name", name=op.f("uq_player_game_id_name")),
        sa.UniqueConstraint("game_id", "seat", name=op.f("uq_player_game_id_seat")),
    )
    op.create_index("ix_player_address", "player", ["address"])
    op.create_table(
        "seat_holder",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("address", sa.String(), nullable=False),
        sa.Column("from_turn", sa.Integer(), nullable=False),
        sa.Column("to_turn", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_seat_holder_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seat_holder")),
    )
    op.create_index("ix_seat_holder_game_id_seat", "seat_holder", ["game_id", "seat"])
    op.create_table(
        "turn_result",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("events_json", sa.Text(), nullable=False),
        sa.Column("state_hash", sa.String(), nullable=False),
        sa.Column("snapshot_json", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_turn_result_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_turn_result")),
        sa.UniqueConstraint("game_id", "seq", name=op.f("uq_turn_result_game_id_seq")),
    )
    op.create_index("ix_turn_result_game_id_turn", "turn_result", ["game_id", "turn"])


def downgrade() -> None:
    op.drop_table("turn_result")
    op.drop_table("seat_holder")
    op.drop_table("player")
    op.drop_table("pending_orders")
    op.drop_table("outbox")
    op.drop_table("order_entry")
    op.drop_table("join_request")
    op.drop_table("inbound_message")
    op.drop_table("service_state")
    op.drop_table("rate_counter")
    op.drop_table("mailbox_checkpoint")
    op.drop_table("game")
