"""pbem.store: the tables, transactions and migrations of pbem (see docs/STORE.md).

Typical use: ``engine = init_db(config.database_url)`` once at start (creates
or upgrades the schema), then one ``with session_scope(engine) as session:``
per use case, taking the game with ``lock_game(session, game_id)``.
"""

from pbem.store.db import (
    is_postgresql,
    lock_game,
    make_engine,
    safe_url,
    session_scope,
    try_lock_game,
)
from pbem.store.errors import ConcurrentUpdateError, DatabaseError, GameNotFoundError
from pbem.store.migrate import current_revision, head_revision, init_db, upgrade
from pbem.store.models import (
    ALL_TABLES,
    GAME_PHASES,
    GAME_STATUSES,
    INBOUND_STATUSES,
    ORDER_KINDS,
    ORDER_SOURCES,
    OUTBOX_STATUSES,
    PLAYER_STATUSES,
    Game,
    InboundMessage,
    JoinRequest,
    MailboxCheckpoint,
    Notice,
    OrderEntry,
    Outbox,
    OutboxBody,
    PendingOrders,
    Player,
    PressRecord,
    RateCounter,
    SeatHolder,
    ServiceState,
    TurnResult,
    id_of,
)
from pbem.store.pending import notices_pending
from pbem.store.types import UTCDateTime, utcnow

__all__ = [
    "ALL_TABLES",
    "GAME_PHASES",
    "GAME_STATUSES",
    "INBOUND_STATUSES",
    "ORDER_KINDS",
    "ORDER_SOURCES",
    "OUTBOX_STATUSES",
    "PLAYER_STATUSES",
    "ConcurrentUpdateError",
    "DatabaseError",
    "Game",
    "GameNotFoundError",
    "InboundMessage",
    "id_of",
    "JoinRequest",
    "MailboxCheckpoint",
    "OrderEntry",
    "Outbox",
    "OutboxBody",
    "PendingOrders",
    "Player",
    "PressRecord",
    "Notice",
    "notices_pending",
    "RateCounter",
    "SeatHolder",
    "ServiceState",
    "TurnResult",
    "UTCDateTime",
    "current_revision",
    "head_revision",
    "init_db",
    "is_postgresql",
    "lock_game",
    "make_engine",
    "safe_url",
    "session_scope",
    "try_lock_game",
    "upgrade",
    "utcnow",
]
