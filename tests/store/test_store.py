"""The storage layer on SQLite and PostgreSQL: constraints, transactions, locks, types."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import exc, func, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, select

from pbem.store import (
    ConcurrentUpdateError,
    DatabaseError,
    Game,
    GameNotFoundError,
    InboundMessage,
    OrderEntry,
    Outbox,
    PendingOrders,
    Player,
    RateCounter,
    TurnResult,
    init_db,
    lock_game,
    make_engine,
    session_scope,
    try_lock_game,
)

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = init_db(db_url)
    yield engine
    engine.dispose()


def new_game(name: str = "alpha", **fields: object) -> Game:
    values: dict[str, object] = {
        "name": name,
        "map_name": "classic",
        "map_text": "[map]\nname = classic\n",
        "preset": "classic",
        "dice_version": "pbem-dice-v1",
        "secret": "00" * 32,
        "commitment": "ab" * 32,
    }
    values.update(fields)
    return Game(**values)


def add_game(engine: Engine, name: str = "alpha") -> int:
    with session_scope(engine) as session:
        game = new_game(name)
        session.add(game)
        session.flush()
        assert game.id is not None
        return game.id


def new_player(game_id: int, seat: int, name: str) -> Player:
    return Player(
        game_id=game_id,
        seat=seat,
        name=name,
        colour="red",
        address=f"{name}@example.org",
        secret_hash="h",
    )


def inbound(message_id: str, raw: bytes = b"Subject: x\r\n\r\nbody\r\n") -> InboundMessage:
    return InboundMessage(
        message_id=message_id,
        checksum="c" * 64,
        mailbox="INBOX",
        uid=4_294_967_295,  # the largest IMAP UID
        raw=raw,
        sender="bob@example.org",
        subject="orders",
    )


def outbox(message_id: str) -> Outbox:
    return Outbox(message_id=message_id, kind="report", recipient="bob@example.org", subject="s")


def count(engine: Engine, table: type[SQLModel]) -> int:
    with session_scope(engine, write=False) as session:
        return session.exec(select(func.count()).select_from(table)).one()


# --- unique constraints -----------------------------------------------------------------

# Each case: rows whose second row must be refused, given a game id.
DUPLICATES: dict[str, Callable[[int], list[SQLModel]]] = {
    "game name": lambda g: [new_game("alpha")],
    "player seat": lambda g: [new_player(g, 0, "ann"), new_player(g, 0, "bob")],
    "player name": lambda g: [new_player(g, 0, "ann"), new_player(g, 1, "ann")],
    "order seq": lambda g: [
        OrderEntry(game_id=g, seq=1, turn=1, kind="turn", source="mail", text="a"),
        OrderEntry(game_id=g, seq=1, turn=2, kind="turn", source="gm", text="b"),
    ],
    "turn result": lambda g: [
        TurnResult(game_id=g, turn=3, events_json="[]", state_hash="h", snapshot_json="{}"),
        TurnResult(game_id=g, turn=3, events_json="[]", state_hash="i", snapshot_json="{}"),
    ],
    "pending orders": lambda g: [
        PendingOrders(game_id=g, turn=2, seat=1, text="a"),
        PendingOrders(game_id=g, turn=2, seat=1, text="b"),
    ],
    "inbound Message-ID": lambda g: [inbound("<m1@x>"), inbound("<m1@x>")],
    "outbox Message-ID": lambda g: [outbox("<o1@x>"), outbox("<o1@x>")],
    "rate window": lambda g: [
        RateCounter(key="reply:bob@x", window_start=T0, count=1),
        RateCounter(key="reply:bob@x", window_start=T0, count=2),
    ],
}


@pytest.mark.parametrize("case", sorted(DUPLICATES))
def test_duplicate_is_refused_and_nothing_is_kept(engine: Engine, case: str) -> None:
    game_id = add_game(engine, "alpha")
    rows = DUPLICATES[case](game_id)
    with pytest.raises(exc.IntegrityError), session_scope(engine) as session:
        for row in rows:
            session.add(row)
            session.flush()
    table = type(rows[0])
    assert count(engine, table) == (1 if table is Game else 0)  # the whole transaction rolled back


def test_same_message_id_in_separate_transactions_is_refused(engine: Engine) -> None:
    with session_scope(engine) as session:
        session.add(inbound("<dup@example.org>"))
    with pytest.raises(exc.IntegrityError), session_scope(engine) as session:
        session.add(inbound("<dup@example.org>"))
    assert count(engine, InboundMessage) == 1


def test_different_rows_are_accepted(engine: Engine) -> None:
    game_id = add_game(engine)
    with session_scope(engine) as session:
        session.add_all([new_player(game_id, 0, "ann"), new_player(game_id, 1, "bob")])
        session.add_all([inbound("<a@x>"), inbound("<b@x>")])
    assert count(engine, Player) == 2
    assert count(engine, InboundMessage) == 2


def test_check_constraint_refuses_unknown_phase(engine: Engine) -> None:
    with pytest.raises(exc.IntegrityError), session_scope(engine) as session:
        session.add(new_game(phase="lunch"))
    assert count(engine, Game) == 0


def test_foreign_key_refuses_player_of_missing_game(engine: Engine) -> None:
    with pytest.raises(exc.IntegrityError), session_scope(engine) as session:
        session.add(new_player(999, 0, "ann"))
    assert count(engine, Player) == 0


# --- transactions -------------------------------------------------------------------------


def test_session_scope_commits(engine: Engine) -> None:
    add_game(engine, "alpha")
    with session_scope(engine, write=False) as session:
        assert [g.name for g in session.exec(select(Game))] == ["alpha"]


def test_session_scope_rolls_back_on_error(engine: Engine) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom), session_scope(engine) as session:
        session.add(new_game("alpha"))
        session.flush()  # the row reached the database, inside the transaction
        raise Boom
    assert count(engine, Game) == 0


def test_objects_stay_readable_after_the_scope(engine: Engine) -> None:
    with session_scope(engine) as session:
        game = new_game("alpha")
        session.add(game)
    assert (game.name, game.phase, game.turn, game.version) == ("alpha", "open", 0, 1)


def test_game_version_is_bumped_on_each_update(engine: Engine) -> None:
    game_id = add_game(engine)
    for expected in (2, 3):
        with session_scope(engine) as session:
            game = lock_game(session, game_id)
            game.turn += 1
        assert game.version == expected


def test_stale_game_update_is_refused(engine: Engine) -> None:
    game_id = add_game(engine)
    with session_scope(engine) as session:
        stale = session.get(Game, game_id)
    assert stale is not None and stale.version == 1
    with session_scope(engine) as session:
        lock_game(session, game_id).turn = 5  # someone else moves the game on
    with pytest.raises(ConcurrentUpdateError) as caught, session_scope(engine) as session:
        session.add(stale)
        stale.turn = 1
    assert str(caught.value) == (
        "the game was changed by another process at the same time; nothing was saved, "
        "run the command again"
    )
    with session_scope(engine) as session:
        assert lock_game(session, game_id).turn == 5


# --- types --------------------------------------------------------------------------------


def test_raw_mail_bytes_round_trip_exactly(engine: Engine) -> None:
    raw = (
        b"From: b\xf6b <bob@example.org>\r\nSubject: =?utf-8?q?x?=\r\n\r\n"
        + bytes(range(256)) * 64
        + b"\r\n.\r\n\x00trailing NUL\x00"
    )
    with session_scope(engine) as session:
        session.add(inbound("<raw@x>", raw))
    with session_scope(engine, write=False) as session:
        stored = session.exec(select(InboundMessage)).one()
    assert stored.raw == raw
    assert stored.uid == 4_294_967_295


def test_aware_datetimes_come_back_as_the_same_instant_in_utc(engine: Engine) -> None:
    berlin = timezone(timedelta(hours=2))
    deadline = datetime(2024, 7, 1, 18, 30, 15, 123456, tzinfo=berlin)
    game_id = add_game(engine)
    with session_scope(engine) as session:
        lock_game(session, game_id).deadline = deadline
    with session_scope(engine, write=False) as session:
        game = session.get(Game, game_id)
    assert game is not None
    assert game.deadline == deadline
    assert game.deadline.tzinfo is UTC
    assert game.deadline.isoformat() == "2024-07-01T16:30:15.123456+00:00"
    assert game.created_at.tzinfo is UTC


def test_naive_datetime_is_refused(engine: Engine) -> None:
    with pytest.raises(exc.StatementError) as caught, session_scope(engine) as session:
        session.add(new_game(deadline=datetime(2024, 7, 1, 18, 30)))
    assert isinstance(caught.value.orig, ValueError)
    assert str(caught.value.orig) == (
        "naive datetime 2024-07-01T18:30:00 refused: give a timezone (use utcnow())"
    )
    assert count(engine, Game) == 0


# --- locks --------------------------------------------------------------------------------


def test_lock_game_of_missing_game(engine: Engine) -> None:
    with pytest.raises(GameNotFoundError) as caught, session_scope(engine) as session:
        lock_game(session, 42)
    assert str(caught.value) == "there is no game with id 42"
    with pytest.raises(GameNotFoundError), session_scope(engine) as session:
        try_lock_game(session, 42)


def test_lock_game_reads_fresh_values(engine: Engine) -> None:
    game_id = add_game(engine)
    with session_scope(engine) as session:
        game = session.get(Game, game_id)
        assert game is not None
        session.exec(text("UPDATE game SET turn = 7 WHERE id = :id"), params={"id": game_id})
        assert lock_game(session, game_id).turn == 7


@pytest.mark.integration
def test_try_lock_game_skips_a_game_another_worker_holds(pg_db_url: str) -> None:
    engine = init_db(pg_db_url)
    try:
        first_id, second_id = add_game(engine, "first"), add_game(engine, "second")
        with session_scope(engine) as holder:
            assert lock_game(holder, first_id).name == "first"
            with session_scope(engine) as worker:
                assert try_lock_game(worker, first_id) is None
                other = try_lock_game(worker, second_id)
                assert other is not None and other.name == "second"
        with session_scope(engine) as worker:  # released at the holder's commit
            game = try_lock_game(worker, first_id)
            assert game is not None and game.name == "first"
    finally:
        engine.dispose()


def test_sqlite_write_transaction_holds_the_write_lock(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pbem.db'}"
    engine = init_db(url)
    impatient = make_engine(url, sqlite_busy_timeout_ms=0)
    game_id = add_game(engine)
    try:
        with session_scope(engine) as holder:
            assert try_lock_game(holder, game_id) is not None  # BEGIN IMMEDIATE ran
            with session_scope(engine, write=False) as reader:  # readers are not blocked
                assert reader.exec(select(Game.name)).one() == "alpha"
            with pytest.raises(DatabaseError) as caught, session_scope(impatient) as writer:
                writer.exec(select(Game.name)).one()
        assert str(caught.value) == (
            f"database sqlite:///{tmp_path / 'pbem.db'} is busy: another process held its "
            "write lock for too long (is another pbem running?)"
        )
        with session_scope(impatient) as writer:  # free again
            assert writer.exec(select(Game.name)).one() == "alpha"
    finally:
        engine.dispose()
        impatient.dispose()


# --- engines ------------------------------------------------------------------------------


def test_sqlite_file_engine_settings(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "pbem.db"
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            pragmas = {
                name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()
                for name in ("journal_mode", "foreign_keys", "busy_timeout")
            }
        assert pragmas == {"journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 5000}
        assert path.is_file()
    finally:
        engine.dispose()


def test_sqlite_memory_engine_is_one_shared_database() -> None:
    engine = init_db("sqlite:///:memory:")
    add_game(engine, "alpha")
    with Session(engine) as other:
        assert other.exec(select(Game.name)).all() == ["alpha"]
        assert other.exec(text("PRAGMA foreign_keys")).scalar() == 1


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://pbem:pw@db.example.org/pbem",
        "postgres://pbem:pw@db.example.org/pbem",
        "postgresql+psycopg://pbem:pw@db.example.org/pbem",
    ],
)
def test_postgresql_urls_use_psycopg_3(url: str) -> None:
    engine = make_engine(url)
    assert engine.url.render_as_string(hide_password=False) == (
        "postgresql+psycopg://pbem:pw@db.example.org/pbem"
    )
    assert engine.dialect.driver == "psycopg"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "mysql://root@localhost/pbem",
            "unsupported database URL scheme 'mysql' in mysql://root@localhost/pbem: "
            "pbem works with sqlite:///path/to/file.db or postgresql://user@host/dbname",
        ),
        (
            "pbem.db",
            "bad database URL 'pbem.db': expected sqlite:///path/to/file.db "
            "or postgresql://user:password@host:port/dbname",
        ),
    ],
)
def test_bad_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(DatabaseError) as caught:
        make_engine(url)
    assert str(caught.value) == message


def test_unreachable_server_is_a_database_error_without_password() -> None:
    # Port 1 on loopback: nothing listens there, the connection is refused at once.
    engine = make_engine("postgresql://pbem:hunter2@127.0.0.1:1/pbem")
    with pytest.raises(DatabaseError) as caught, session_scope(engine) as session:
        session.exec(select(Game)).all()
    message = str(caught.value)
    assert message.startswith(
        "cannot connect to database postgresql+psycopg://pbem:***@127.0.0.1:1/pbem: "
    )
    assert "hunter2" not in message
