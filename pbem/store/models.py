"""The tables of pbem.

One class per table. The order log (OrderEntry) is the truth of a game;
TurnResult snapshots and hashes are caches and checks. JSON lives in Text
columns (json strings) so SQLite and PostgreSQL store the same bytes; every
datetime is aware UTC (see UTCDateTime); raw mail is kept byte for byte.

Closed sets of values (phases, statuses, kinds) are listed in the tuples
below and enforced by CHECK constraints, so a typo in the service fails at
the database instead of leaving a game in a state nobody handles.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    Index,
    Integer,
    LargeBinary,
    Text,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

from pbem.store.types import UTCDateTime, utcnow
from pbem.vocab import (
    GamePhase,
    GameStatus,
    InboundStatus,
    OutboxStatus,
    RawFormat,
    SeatStatus,
)

# Constraint names follow one pattern, so later migrations (batch mode on
# SQLite rebuilds tables) can find and drop them by name.
SQLModel.metadata.naming_convention = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

GAME_PHASES = tuple(GamePhase)
GAME_STATUSES = tuple(GameStatus)
PLAYER_STATUSES = tuple(SeatStatus)
ORDER_KINDS = ("setup", "turn", "command")
ORDER_SOURCES = ("mail", "gm", "default", "bot")
INBOUND_STATUSES = tuple(InboundStatus)
OUTBOX_STATUSES = tuple(OutboxStatus)
RAW_FORMATS = tuple(RawFormat)


def _one_of(column: str, values: tuple[str, ...]) -> CheckConstraint:
    listed = ", ".join(f"'{v}'" for v in values)
    return CheckConstraint(f"{column} IN ({listed})", name=column)


def _when(**kwargs: Any) -> Any:
    """A timestamp field: aware UTC, timezone-aware column."""
    return Field(sa_type=UTCDateTime, **kwargs)


# The version column is declared once so the mapper can use it for its
# optimistic check: every UPDATE of a game row says "WHERE version = <read>"
# and bumps it; a concurrent change raises (ConcurrentUpdateError in
# session_scope) instead of being overwritten.
_game_version = Column("version", Integer, nullable=False)


class Game(SQLModel, table=True):
    __tablename__ = "game"
    __table_args__ = (
        UniqueConstraint("name"),
        Index("ix_game_status_deadline", "status", "deadline"),
        _one_of("phase", GAME_PHASES),
        _one_of("status", GAME_STATUSES),
    )
    __mapper_args__ = {"version_id_col": _game_version}

    id: int | None = Field(default=None, primary_key=True)
    name: str
    title: str = ""
    map_name: str
    map_text: str = Field(sa_type=Text)  # the whole map file, frozen at creation
    preset: str
    options_json: str = Field(default="{}", sa_type=Text)
    settings_json: str = Field(default="{}", sa_type=Text)  # timing/policy, owned by the service
    dice_version: str
    secret: str  # hex; never mailed before the game ends
    commitment: str  # hex SHA-256 of the secret
    secret_revealed: bool = False
    phase: str = GamePhase.OPEN
    status: str = GameStatus.RUNNING
    turn: int = 0  # player-turn number
    current_seat: int | None = None
    deadline: datetime | None = _when(default=None)
    winner_seat: int | None = None
    created_at: datetime = _when(default_factory=utcnow)
    updated_at: datetime = _when(default_factory=utcnow, sa_column_kwargs={"onupdate": utcnow})
    gm_address: str | None = None
    version: int | None = Field(default=None, sa_column=_game_version)
    # 1: state hashes are the plain SHA-256 of the state (games from before migration 0006);
    # 2: keyed by the game's secret (orderlog/replay.py HASH_KEYED), so they give nothing away.
    hash_version: int = Field(default=1, sa_column_kwargs={"server_default": "1"})


def id_of(row: Game) -> int:
    """The id of a stored game (a game not flushed yet has none: a bug to catch)."""
    if row.id is None:
        raise ValueError(f"game {row.name!r} has no id yet: flush it first")
    return row.id


class Player(SQLModel, table=True):
    __tablename__ = "player"
    __table_args__ = (
        UniqueConstraint("game_id", "seat"),
        UniqueConstraint("game_id", "name"),
        Index("ix_player_address", "address"),
        _one_of("status", PLAYER_STATUSES),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="game.id")
    seat: int
    name: str
    colour: str
    address: str
    secret_hash: str
    status: str = SeatStatus.ACTIVE
    missed_in_row: int = 0
    missed_total: int = 0
    misses_json: str = Field(default="[]", sa_type=Text)  # recent turn numbers missed
    absent_from: datetime | None = _when(default=None)
    absent_to: datetime | None = _when(default=None)
    absence_days_used: int = 0
    joined_at: datetime = _when(default_factory=utcnow)
    # Mail from the seat's address with a wrong PASSWORD (migration 0005): the
    # GM is told at thresholds (pbem.service.intake.seatguard), `pbem show` lists them.
    wrong_passwords: int = 0
    last_wrong_password_at: datetime | None = _when(default=None)
    # The seat's last applied mail (digest of its text; the game's last order-log
    # seq once it was applied): the same text again before anything more is
    # logged is "already applied" (pbem.service.intake.seatguard).
    last_applied_digest: str = ""
    last_applied_seq: int | None = None
    last_applied_logged: bool = False  # whether that mail's orders were logged (played)


class SeatHolder(SQLModel, table=True):
    """Who held a seat from which turn to which (to_turn is None while holding)."""

    __tablename__ = "seat_holder"
    __table_args__ = (Index("ix_seat_holder_game_id_seat", "game_id", "seat"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="game.id")
    seat: int
    name: str
    address: str
    from_turn: int
    to_turn: int | None = None


class OrderEntry(SQLModel, table=True):
    """One entry of a game's append-only order log, numbered by seq."""

    __tablename__ = "order_entry"
    __table_args__ = (
        UniqueConstraint("game_id", "seq"),
        Index("ix_order_entry_game_id_turn", "game_id", "turn"),
        Index("ix_order_entry_message_id", "message_id"),
        _one_of("kind", ORDER_KINDS),
        _one_of("source", ORDER_SOURCES),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="game.id")
    seq: int
    turn: int
    seat: int | None = None  # None for whole-setup entries
    kind: str
    source: str
    message_id: str | None = None
    text: str = Field(sa_type=Text)  # canonical order text
    created_at: datetime = _when(default_factory=utcnow)


class TurnResult(SQLModel, table=True):
    """The state after one adjudicated step: a cache and a check, never the truth.

    A step is keyed by ``seq``, the order-log entry that completed it (0: the
    deal itself), not by turn: a RESIGN in the middle of a turn is a step too.
    """

    __tablename__ = "turn_result"
    __table_args__ = (
        UniqueConstraint("game_id", "seq"),
        Index("ix_turn_result_game_id_turn", "game_id", "turn"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="game.id")
    seq: int
    turn: int
    seat: int | None = None
    events_json: str = Field(sa_type=Text)
    state_hash: str
    snapshot_json: str = Field(sa_type=Text)
    created_at: datetime = _when(default_factory=utcnow)


class PendingOrders(SQLModel, table=True):
    """Orders received in deadline mode; a later mail from the seat replaces them."""

    __tablename__ = "pending_orders"
    __table_args__ = (UniqueConstraint("game_id", "turn", "seat"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="game.id")
    turn: int
    seat: int
    text: str = Field(sa_type=Text)
    source: str = "mail"
    message_id: str | None = None
    received_at: datetime = _when(default_factory=utcnow)


class InboundMessage(SQLModel, table=True):
    """Every mail fetched: the claim, and what is kept of it (the header block
    and the SHA-256 of the whole; the whole mail, PASSWORD lines blanked,
    only when it was processed for a game: pbem/store/rawmail.py).

    A mail is known by its Message-ID *and* a hash of its content without
    trace headers (``content_hash``): the same mail delivered twice is one
    row, a reused Message-ID with other content is another. The row is
    inserted as the claim (status ``claimed``, a lease) before anything is
    done, so several workers divide the inbox and a dead worker's claim
    expires; its outcome is written in the same transaction as its effects.
    """

    __tablename__ = "inbound_message"
    __table_args__ = (
        UniqueConstraint("message_id", "content_hash"),
        Index("ix_inbound_message_message_id", "message_id"),
        Index("ix_inbound_message_status", "status"),
        Index("ix_inbound_message_game_id", "game_id"),
        Index("ix_inbound_message_checksum", "checksum"),
        _one_of("status", INBOUND_STATUSES),
        _one_of("raw_format", RAW_FORMATS),
    )

    id: int | None = Field(default=None, primary_key=True)
    message_id: str
    content_hash: str = ""  # sha256 hex of the mail without its trace headers
    checksum: str  # sha256 hex of raw
    mailbox: str
    uid: int | None = Field(default=None, sa_type=BigInteger)  # IMAP UIDs are 32-bit unsigned
    raw: bytes = Field(sa_type=LargeBinary)  # as raw_format says (see pbem.store.rawmail)
    raw_format: str = RawFormat.PLAIN
    sender: str
    subject: str
    received_at: datetime = _when(default_factory=utcnow)
    status: str = InboundStatus.NEW
    game_id: int | None = Field(default=None, foreign_key="game.id")
    outcome: str = Field(default="", sa_type=Text)
    processed_at: datetime | None = _when(default=None)
    attempts: int = 0  # claims taken to process it, each counted before its work
    next_attempt_at: datetime | None = _when(default=None)
    last_error: str | None = Field(default=None, sa_type=Text)
    lease_owner: str | None = None  # the worker processing it now
    lease_until: datetime | None = _when(default=None)


class Outbox(SQLModel, table=True):
    """Mail waiting to be sent.

    A sender leases a row (``lease_owner``/``lease_until``) before sending it
    and marks it sent right after the server accepted it, one row at a time.
    Past the retention period a sent row keeps its headers and the hash of
    the rendered mail (``raw_sha256``) only. The mail itself is in
    OutboxBody: the columns the sender changes several times per mail stay
    in a small row, so a lease or a mark does not rewrite the body's pages.
    """

    __tablename__ = "outbox"
    __table_args__ = (
        UniqueConstraint("message_id"),
        Index("ix_outbox_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_outbox_game_id", "game_id"),
        _one_of("status", OUTBOX_STATUSES),
    )

    id: int | None = Field(default=None, primary_key=True)
    message_id: str
    game_id: int | None = Field(default=None, foreign_key="game.id")
    kind: str  # "report", "receipt", "error", "alert", "turn", "reminder", ...
    recipient: str
    subject: str
    raw_sha256: str = ""  # of the rendered mail, kept when the body is pruned
    in_reply_to: str | None = None
    status: str = OutboxStatus.PENDING
    attempts: int = 0
    next_attempt_at: datetime = _when(default_factory=utcnow)
    last_error: str | None = Field(default=None, sa_type=Text)
    created_at: datetime = _when(default_factory=utcnow)
    sent_at: datetime | None = _when(default=None)
    lease_owner: str | None = None
    lease_until: datetime | None = _when(default=None)


class OutboxBody(SQLModel, table=True):
    """The rendered mail of one outbox row, written once (and once more when pruned).

    Apart from Outbox because SQLite rewrites a row's whole payload, overflow
    pages included, whenever one of its columns changes size: with the body
    in the row, marking a mail sent wrote ~74 KB to the WAL instead of ~4 KB.
    """

    __tablename__ = "outbox_body"
    __table_args__ = (_one_of("raw_format", RAW_FORMATS),)

    outbox_id: int = Field(
        foreign_key="outbox.id", primary_key=True, sa_column_kwargs={"autoincrement": False}
    )
    raw: bytes = Field(sa_type=LargeBinary)  # as raw_format says (see pbem.store.rawmail)
    raw_format: str = RawFormat.PLAIN  # PRUNED: raw is the header block only


class MailboxCheckpoint(SQLModel, table=True):
    """How far an IMAP mailbox has been read, valid while its UIDVALIDITY holds.

    ``mailbox`` names server, user and folder ("imap://user@host:port/INBOX"),
    so two accounts with an INBOX never share a checkpoint.
    """

    __tablename__ = "mailbox_checkpoint"
    __table_args__ = (UniqueConstraint("mailbox"),)

    id: int | None = Field(default=None, primary_key=True)
    mailbox: str
    uidvalidity: int = Field(sa_type=BigInteger)
    last_uid: int = Field(default=0, sa_type=BigInteger)
    updated_at: datetime = _when(default_factory=utcnow, sa_column_kwargs={"onupdate": utcnow})


class RateCounter(SQLModel, table=True):
    """Mails sent per key (e.g. "reply:bob@x") in one time window."""

    __tablename__ = "rate_counter"
    __table_args__ = (UniqueConstraint("key", "window_start"),)

    id: int | None = Field(default=None, primary_key=True)
    key: str
    window_start: datetime = _when()
    count: int = 0


class JoinRequest(SQLModel, table=True):
    __tablename__ = "join_request"
    __table_args__ = (
        UniqueConstraint("token"),
        Index("ix_join_request_game_id", "game_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="game.id")
    name: str
    address: str
    token: str
    confirmed: bool = False
    created_at: datetime = _when(default_factory=utcnow)


class ServiceState(SQLModel, table=True):
    """Small facts about the service itself, e.g. the last poll time."""

    __tablename__ = "service_state"
    __table_args__ = (UniqueConstraint("key"),)

    id: int | None = Field(default=None, primary_key=True)
    key: str
    value: str = Field(default="", sa_type=Text)


class PressRecord(SQLModel, table=True):
    """One relayed press message (notify.relay_press), as the site reads it back.

    The site shows the rows sent to all players and nothing else; it never
    parses mail text for press. An anonymous message keeps no sender name,
    and its seat only when the game copies press to the GM (who is told the
    sender anyway); ``key`` makes a relay happen once (see relay_press).
    """

    __tablename__ = "press"
    __table_args__ = (
        UniqueConstraint("key"),
        Index("ix_press_game_id", "game_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="game.id")
    turn: int
    sender_seat: int | None = None  # None when anonymous (unless the GM gets copies)
    sender_name: str = ""  # the name at the time; "" when anonymous
    anonymous: bool = False
    to_all: bool = False
    recipients_json: str = Field(default="[]", sa_type=Text)  # the seats it went to
    body: str = Field(sa_type=Text)
    sent_at: datetime = _when(default_factory=utcnow)
    key: str  # hex SHA-256 of where the press came from: never published


class Notice(SQLModel, table=True):
    """One mail decided and not yet told: who gets what about which step.

    Written in the decision's transaction (pbem/service/play/notify.py); rendered
    and queued in the outbox after its commit (pbem/service/tell/telling.py),
    which sets ``told_at`` in the outbox row's transaction. Nothing rendered
    is kept: the mail is made again from the store (the order log, the
    snapshots) and ``params``, the few inputs the store does not keep (the
    game's roster at the time, a refused mail's problems). ``created_at`` is
    the decision's clock time, the mail's Date: a notice told twice gives the
    same bytes, and its Message-ID is queued once.
    """

    __tablename__ = "notice"
    __table_args__ = (
        UniqueConstraint("message_id"),
        Index("ix_notice_told_at", "told_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int | None = Field(default=None, foreign_key="game.id")
    kind: str  # a NoticeKind
    step: int | None = None  # the order-log seq the mail is about (its state), if any
    recipient: str
    seat: int | None = None
    message_id: str
    in_reply_to: str | None = None
    params_json: str = Field(default="{}", sa_type=Text)
    created_at: datetime = _when(default_factory=utcnow)
    told_at: datetime | None = _when(default=None)


ALL_TABLES = (
    Game,
    Player,
    SeatHolder,
    OrderEntry,
    TurnResult,
    PendingOrders,
    InboundMessage,
    Outbox,
    OutboxBody,
    MailboxCheckpoint,
    RateCounter,
    JoinRequest,
    ServiceState,
    PressRecord,
    Notice,
)
