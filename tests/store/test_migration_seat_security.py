"""Migration 0005: a 0004 database with a game and its seats gains the seat
columns (wrong passwords, last applied mail) with every row kept, is read
through the models, and downgrades back; on SQLite and PostgreSQL (``db_url``).
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from pbem.service.play.passwords import hash_password, verify_password
from pbem.store import Player, current_revision, make_engine, migrate, session_scope, upgrade

NOW = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
NEW_COLUMNS = {
    "wrong_passwords",
    "last_wrong_password_at",
    "last_applied_digest",
    "last_applied_seq",
    "last_applied_logged",
}


def _table(engine: Engine, name: str) -> sa.Table:
    return sa.Table(name, sa.MetaData(), autoload_with=engine)


def _fill_0004(engine: Engine) -> list[str]:
    """A game and three seats, written with the 0004 tables; the seats' hashes."""
    game, player = _table(engine, "game"), _table(engine, "player")
    hashes = [hash_password(f"pw{seat}") for seat in range(3)]
    with engine.begin() as connection:
        game_id = connection.execute(
            game.insert().values(
                name="old",
                title="old",
                map_name="classic",
                map_text="x",
                preset="classic",
                options_json="{}",
                settings_json="{}",
                dice_version="pbem-dice-v1",
                secret="00",
                commitment="11",
                secret_revealed=False,
                status="running",
                phase="playing",
                turn=7,
                version=1,
                created_at=NOW,
                updated_at=NOW,
            )
        ).inserted_primary_key[0]
        for seat, name in enumerate(("ann", "bob", "cat")):
            connection.execute(
                player.insert().values(
                    game_id=game_id,
                    seat=seat,
                    name=name,
                    colour="red",
                    address=f"{name}@players.test",
                    secret_hash=hashes[seat],
                    status="active",
                    missed_in_row=seat,
                    missed_total=seat,
                    misses_json="[]",
                    absence_days_used=0,
                    joined_at=NOW,
                )
            )
    return hashes


def _downgrade(engine: Engine, revision: str) -> None:
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as connection:
        if sqlite:
            migrate._sqlite_pragma(connection, "PRAGMA foreign_keys = OFF")
        try:
            with connection.begin():
                command.downgrade(migrate._config(connection), revision)
        finally:
            if sqlite:
                migrate._sqlite_pragma(connection, "PRAGMA foreign_keys = ON")


def test_a_0004_database_gains_the_seat_columns_and_keeps_its_seats(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        upgrade(engine, "0004")
        hashes = _fill_0004(engine)
        columns = {c["name"] for c in sa.inspect(engine).get_columns("player")}
        assert not NEW_COLUMNS & columns

        upgrade(engine, "0005")
        assert current_revision(engine) == "0005"
        columns = {c["name"] for c in sa.inspect(engine).get_columns("player")}
        assert NEW_COLUMNS <= columns
        with session_scope(engine) as session:
            rows = session.exec(select(Player).order_by(col(Player.seat))).all()
            assert [(p.name, p.missed_in_row, p.secret_hash) for p in rows] == [
                ("ann", 0, hashes[0]),
                ("bob", 1, hashes[1]),
                ("cat", 2, hashes[2]),
            ]
            assert {
                (p.wrong_passwords, p.last_wrong_password_at, p.last_applied_digest) for p in rows
            } == {(0, None, "")}
            assert {(p.last_applied_seq, p.last_applied_logged) for p in rows} == {(None, False)}
            assert verify_password("pw1", rows[1].secret_hash)
            rows[1].wrong_passwords = 4
            rows[1].last_wrong_password_at = NOW
            session.add(rows[1])
        with session_scope(engine, write=False) as session:
            bob = session.exec(select(Player).where(Player.name == "bob")).one()
            assert (bob.wrong_passwords, bob.last_wrong_password_at) == (4, NOW)

        _downgrade(engine, "0004")
        assert current_revision(engine) == "0004"
        columns = {c["name"] for c in sa.inspect(engine).get_columns("player")}
        assert not NEW_COLUMNS & columns
        with engine.connect() as connection:
            kept = connection.execute(
                sa.text("SELECT name, secret_hash FROM player ORDER BY seat")
            ).all()
        assert [tuple(r) for r in kept] == list(zip(("ann", "bob", "cat"), hashes, strict=True))
    finally:
        engine.dispose()
