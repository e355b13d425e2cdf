"""Engines, transactions and game locks.

One URL picks the database: a SQLite file (the default; WAL mode, one
writer at a time) or PostgreSQL through psycopg 3 (several daemons, each
game taken under a row lock). Everything else in pbem works through
``session_scope`` and never needs to know which one it is talking to.

SQLite notes. Python's sqlite3 driver starts transactions late and only for
writes; we switch that off (``isolation_level = None``) and emit BEGIN
ourselves from SQLAlchemy's "begin" event, as the SQLAlchemy SQLite
dialect documentation recommends ("Enabling Non-Legacy SQLite
Transactional Modes"). A write transaction begins with BEGIN IMMEDIATE, so
it takes the database's write lock up front: two writers queue (up to the
busy timeout) instead of both reading and one failing at its first write.

Durability. Every transaction commits with ``synchronous = FULL`` (the WAL
is synced to disk at the commit, and with it every earlier commit) unless
it is opened with ``durable=False``: then ``synchronous = NORMAL``, which in
WAL mode survives a killed process but not an OS crash or power loss. Only
commits whose loss can cause nothing worse than a duplicate send may be
non-durable; docs/RELIABILITY.md (section 8) gives the argument.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, exc
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.pool import StaticPool
from sqlmodel import Session, select

from pbem.store.errors import (
    ConcurrentUpdateError,
    DatabaseError,
    DatabaseUnavailable,
    GameNotFoundError,
)
from pbem.store.models import Game

SQLITE_BUSY_TIMEOUT_MS = 5000
PG_CONNECT_TIMEOUT_S = 10

# execution option read by the SQLite "begin" listener
_SQLITE_BEGIN = "pbem_sqlite_begin"
# execution option: False for a commit that need not reach the disk (see the module doc)
_DURABLE = "pbem_durable"
# key of the connection's info: the synchronous level it is set to now
_SYNC_LEVEL = "pbem_synchronous"


def make_engine(url: str, *, sqlite_busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS) -> Engine:
    """An engine for ``url``: ``sqlite:///path``, ``sqlite:///:memory:`` or ``postgresql://...``.

    A SQLite file's folder is created if missing. Nothing connects yet: a
    server that cannot be reached shows at the first use, as DatabaseError.
    """
    parsed = _parse_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed, sqlite_busy_timeout_ms)
    return _postgresql_engine(parsed)


def _parse_url(url: str) -> URL:
    try:
        parsed = make_url(url)
    except exc.ArgumentError as err:
        raise DatabaseError(
            f"bad database URL {url!r}: expected sqlite:///path/to/file.db "
            "or postgresql://user:password@host:port/dbname"
        ) from err
    driver = parsed.drivername
    if driver in ("postgresql", "postgres", "postgresql+psycopg"):
        return parsed.set(drivername="postgresql+psycopg")
    if driver in ("sqlite", "sqlite+pysqlite"):
        return parsed
    raise DatabaseError(
        f"unsupported database URL scheme {driver!r} in {safe_url(parsed)}: "
        "pbem works with sqlite:///path/to/file.db or postgresql://user@host/dbname"
    )


def _sqlite_engine(url: URL, busy_timeout_ms: int) -> Engine:
    database = url.database or ":memory:"
    in_memory = database == ":memory:" or database.startswith("file::memory:")
    if in_memory:
        # One connection shared by everyone, or each would see its own empty database.
        engine = create_engine(url, poolclass=StaticPool, connect_args={"check_same_thread": False})
    else:
        folder = Path(database).expanduser().parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise DatabaseError(
                f"cannot create the folder {folder} for the database {database}: {err.strerror}"
            ) from err
        engine = create_engine(url)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves, see below
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if not in_memory:
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        options = connection.get_execution_options()
        if not in_memory:
            level = "FULL" if options.get(_DURABLE, True) else "NORMAL"
            info = connection.connection.info
            if info.get(_SYNC_LEVEL) != level:  # outside a transaction, where it applies
                connection.exec_driver_sql(f"PRAGMA synchronous = {level}")
                info[_SYNC_LEVEL] = level
        mode = options.get(_SQLITE_BEGIN, "IMMEDIATE")
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


def _postgresql_engine(url: URL) -> Engine:
    connect_args: dict[str, Any] = {}
    if "connect_timeout" not in url.query:
        connect_args["connect_timeout"] = PG_CONNECT_TIMEOUT_S
    return create_engine(url, pool_pre_ping=True, connect_args=connect_args)


def safe_url(url: str | URL | Engine) -> str:
    """The URL with its password hidden, for messages and logs."""
    if isinstance(url, Engine):
        url = url.url
    if isinstance(url, str):
        try:
            url = make_url(url)
        except exc.ArgumentError:
            return "<unparseable URL>"
    return url.render_as_string(hide_password=True)


def is_postgresql(bind: Engine | Session) -> bool:
    engine = bind if isinstance(bind, Engine) else bind.get_bind()
    return engine.dialect.name == "postgresql"


def reader(engine: Engine) -> Engine:
    """The same engine, but its SQLite transactions begin DEFERRED (no write lock)."""
    return engine.execution_options(**{_SQLITE_BEGIN: "DEFERRED"})


@contextmanager
def translate_errors(engine: Engine) -> Iterator[None]:
    """Turn driver failures (cannot connect, database busy) into DatabaseError.

    Errors about the data itself (IntegrityError and the like) pass through
    unchanged: they are the caller's to handle.
    """
    try:
        yield
    except StaleDataError as err:
        raise ConcurrentUpdateError(
            "the game was changed by another process at the same time; nothing was "
            "saved, run the command again"
        ) from err
    except (exc.OperationalError, exc.InterfaceError) as err:
        message = _describe(engine, err)
        if message.startswith("cannot connect") or " is busy" in message:
            raise DatabaseUnavailable(message) from err
        raise DatabaseError(message) from err


def _describe(engine: Engine, err: exc.DBAPIError) -> str:
    where = safe_url(engine)
    reason = str(err.orig).strip().splitlines()[0] if err.orig else str(err)
    if "database is locked" in reason:
        return (
            f"database {where} is busy: another process held its write lock for too long "
            "(is another pbem running?)"
        )
    if err.statement is None or err.connection_invalidated:
        return f"cannot connect to database {where}: {reason}"
    return f"database {where} failed: {reason}"


def not_durable(engine: Engine) -> Engine:
    """The same engine, but its SQLite commits are not synced to disk (synchronous
    NORMAL): they survive a killed process, not a power loss. PostgreSQL: unchanged."""
    return engine.execution_options(**{_DURABLE: False})


@contextmanager
def session_scope(engine: Engine, *, write: bool = True, durable: bool = True) -> Iterator[Session]:
    """One transaction: commit when the block ends, roll back if it raises.

    ``write=False`` only changes SQLite's locking (a DEFERRED transaction that
    does not wait for or block the writer); it still commits.
    ``durable=False``: a commit that may be lost in an OS crash or power loss
    (never in a killed process), for work whose loss costs at most a duplicate
    send; see docs/RELIABILITY.md. It spares SQLite's fsync of the WAL.
    Objects stay usable after the block (no expiry on commit).
    """
    bind = engine if write else reader(engine)
    if not durable:
        bind = not_durable(bind)
    session = Session(bind, expire_on_commit=False)
    try:
        with translate_errors(engine):
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise
    finally:
        session.close()


@contextmanager
def connection_scope(engine: Engine, *, durable: bool = True) -> Iterator[Connection]:
    """One transaction on a plain connection, no ORM session: for a hot path of
    a few prepared statements (the outbox's commit per sent mail). Commits
    when the block ends, rolls back if it raises; ``durable`` as in
    ``session_scope``."""
    bind = engine if durable else not_durable(engine)
    with translate_errors(engine), bind.begin() as connection:
        yield connection


def lock_game(session: Session, game_id: int) -> Game:
    """The game row, locked for the rest of the transaction (waits for another holder).

    PostgreSQL: SELECT ... FOR UPDATE. SQLite: a plain select, as the
    write transaction (BEGIN IMMEDIATE) already holds the database's only
    write lock. The row is read fresh even if the session had it already.
    """
    statement = select(Game).where(Game.id == game_id).execution_options(populate_existing=True)
    if is_postgresql(session):
        statement = statement.with_for_update()
    game = session.exec(statement).first()
    if game is None:
        raise GameNotFoundError(game_id)
    return game


def try_lock_game(session: Session, game_id: int) -> Game | None:
    """Like lock_game, but None at once when another worker holds the game.

    PostgreSQL: SELECT ... FOR UPDATE SKIP LOCKED, so several daemons can
    each take a different game and none takes a game twice.
    """
    if not is_postgresql(session):
        return lock_game(session, game_id)
    statement = (
        select(Game)
        .where(Game.id == game_id)
        .with_for_update(skip_locked=True)
        .execution_options(populate_existing=True)
    )
    game = session.exec(statement).first()
    if game is None and session.exec(select(Game.id).where(Game.id == game_id)).first() is None:
        raise GameNotFoundError(game_id)
    return game
