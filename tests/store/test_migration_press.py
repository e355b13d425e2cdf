"""Migration 0006: the press table and game.hash_version.

A database at 0004 whose outbox holds an old press mail ("cat writes to all
players:") is upgraded: the table is there, its schema the model's, and the old
press is not carried over (mail text cannot tell public press from a private one
quoting that line), so the site shows none of it. A game stored before the
migration keeps hash version 1 (plain hashes). Downgraded, both are gone and the
rest is as it was; upgraded again, they are back. On SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from pbem.site.build import _public_press
from pbem.store import Game, current_revision, make_engine, migrate, session_scope, upgrade

NOW = datetime(2026, 11, 28, 3, 0, tzinfo=UTC)
OLD_PRESS = (
    b"Subject: [talk] Press from cat\r\nX-Pbem-Kind: press\r\nMessage-ID: <p1@game.test>\r\n\r\n"
    b"cat writes to you:\r\n\r\nann writes to all players:\r\nBob alone should read this\r\n"
)


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


def _fill_0004(engine: Engine) -> int:
    """A game and one old press mail in its outbox, written as pbem at 0004 did."""
    meta = sa.MetaData()
    game = sa.Table("game", meta, autoload_with=engine)
    outbox = sa.Table("outbox", meta, autoload_with=engine)
    body = sa.Table("outbox_body", meta, autoload_with=engine)
    with engine.begin() as connection:
        game_id = connection.execute(
            game.insert()
            .values(
                name="talk", title="", map_name="classic", map_text="", preset="classic",
                options_json="{}", settings_json="{}", dice_version="v1", secret="00",
                commitment="00", secret_revealed=False, phase="playing", status="running",
                turn=3, created_at=NOW, updated_at=NOW, version=1,
            )
            .returning(game.c.id)
        ).scalar_one()  # fmt: skip
        outbox_id = connection.execute(
            outbox.insert()
            .values(
                message_id="<p1@game.test>", game_id=game_id, kind="press",
                recipient="bob@players.test", subject="[talk] Press from cat", raw_sha256="",
                status="sent", attempts=1, next_attempt_at=NOW, created_at=NOW,
            )
            .returning(outbox.c.id)
        ).scalar_one()  # fmt: skip
        connection.execute(
            body.insert().values(outbox_id=outbox_id, raw=OLD_PRESS, raw_format="plain")
        )
    return int(game_id)


def test_0006_adds_the_press_table_and_carries_no_old_press(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        upgrade(engine, "0004")
        game_id = _fill_0004(engine)
        upgrade(engine, "0006")
        assert current_revision(engine) == "0006"
        assert "press" in sa.inspect(engine).get_table_names()
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            differences = compare_metadata(context, SQLModel.metadata)
        assert [d for d in differences if "press" in repr(d)] == []
        with engine.connect() as connection:
            assert connection.execute(sa.text("SELECT count(*) FROM press")).scalar_one() == 0
            # A game stored before keeps the plain hashes its reports and records carry.
            version = sa.text("SELECT hash_version FROM game WHERE id = :id")
            assert connection.execute(version, {"id": game_id}).scalar_one() == 1
        with session_scope(engine, write=False) as session:
            game = session.get(Game, game_id)
            assert game is not None
            assert _public_press(session, game) == []

        _downgrade(engine, "0004")
        assert current_revision(engine) == "0004"
        assert "press" not in sa.inspect(engine).get_table_names()
        assert "hash_version" not in {c["name"] for c in sa.inspect(engine).get_columns("game")}
        with engine.connect() as connection:
            assert connection.execute(sa.text("SELECT count(*) FROM outbox")).scalar_one() == 1
        upgrade(engine, "0006")
        assert "press" in sa.inspect(engine).get_table_names()
    finally:
        engine.dispose()
