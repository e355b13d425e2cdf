"""Migration 0003: outbox bodies move to outbox_body and back, every byte intact;
migration 0004: the database named for its send log.

A database at 0002 with a pending, a sent and a pruned mail (the three kinds
of body: whole, whole, header block) is upgraded, read through the service,
and downgraded again; on SQLite and PostgreSQL (``db_url``).
"""

from __future__ import annotations

import hashlib
import zlib
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel, col, select

from pbem.service.tell import outbox
from pbem.store import Outbox, current_revision, make_engine, migrate, session_scope, upgrade
from pbem.store.rawmail import header_block

NOW = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)


def _mail(n: int) -> bytes:
    """A mail of ~40 KB that does not compress to nothing (bytes of a hash chain)."""
    chunks, seed = [], f"mail {n}".encode()
    for _ in range(1250):
        seed = hashlib.sha256(seed).digest()
        chunks.append(seed)
    body = b"".join(chunks)
    return (
        f"Subject: mail {n}\r\nMessage-ID: <m{n}@pbem.test>\r\n\r\n".encode() + body + b"\x00\r\n"
    )


# (message_id, status, stored raw, raw_format, the mail as the service reads it)
_PENDING, _SENT, _PRUNED = _mail(1), _mail(2), _mail(3)
ROWS = [
    ("<m1@pbem.test>", "pending", zlib.compress(_PENDING, 1), "zlib", _PENDING),
    ("<m2@pbem.test>", "sent", zlib.compress(_SENT, 1), "zlib", _SENT),
    ("<m3@pbem.test>", "sent", header_block(_PRUNED), "pruned", header_block(_PRUNED)),
    ("<m4@pbem.test>", "failed", b"Subject: old\n\nplain\n", "plain", b"Subject: old\n\nplain\n"),
]


def _downgrade(engine: Engine, revision: str) -> None:
    """What ``upgrade`` does, downwards (foreign keys off on SQLite while tables are rebuilt)."""
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as connection:
        if sqlite:
            migrate._sqlite_pragma(connection, "PRAGMA foreign_keys = OFF")
        try:
            with connection.begin():
                command.downgrade(migrate._config(connection), revision)
                if sqlite:
                    assert connection.exec_driver_sql("PRAGMA foreign_key_check").all() == []
        finally:
            if sqlite:
                migrate._sqlite_pragma(connection, "PRAGMA foreign_keys = ON")


def _table(engine: Engine, name: str) -> sa.Table:
    return sa.Table(name, sa.MetaData(), autoload_with=engine)


def _fill_0002(engine: Engine) -> list[int]:
    table = _table(engine, "outbox")
    ids = []
    with engine.begin() as connection:
        for message_id, status, data, fmt, mail in ROWS:
            inserted = connection.execute(
                table.insert().values(
                    message_id=message_id,
                    kind="report",
                    recipient="ann@players.test",
                    subject=message_id,
                    raw=data,
                    raw_format=fmt,
                    raw_sha256=hashlib.sha256(mail).hexdigest(),
                    status=status,
                    attempts=1 if status != "pending" else 0,
                    next_attempt_at=NOW,
                    created_at=NOW,
                    sent_at=NOW if status == "sent" else None,
                )
            )
            ids.append(inserted.inserted_primary_key[0])
    return ids


LATER_TABLES = {"press", "game.hash_version", "notice"}  # of migrations 0006, 0007


def _table_of(difference: tuple[object, ...]) -> str | None:
    """The table (or table.column) a schema difference (add_table, add_index,
    add_column) is about."""
    if difference[0] == "add_column":
        return f"{difference[2]}.{getattr(difference[3], 'name', '')}"
    thing = difference[1]
    table = thing if difference[0] == "add_table" else getattr(thing, "table", None)
    return getattr(table, "name", None)


def _outbox_0002(engine: Engine) -> list[tuple[object, ...]]:
    table = _table(engine, "outbox")
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(table.c.id, table.c.message_id, table.c.raw, table.c.raw_format).order_by(
                table.c.id
            )
        )
        return [(i, m, bytes(raw), fmt) for i, m, raw, fmt in rows]


def test_a_0002_database_upgrades_with_every_body_and_downgrades_back(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        upgrade(engine, "0002")
        ids = _fill_0002(engine)
        before = _outbox_0002(engine)
        assert [(m, fmt) for _, m, _, fmt in before] == [(r[0], r[3]) for r in ROWS]

        upgrade(engine, "0003")
        assert current_revision(engine) == "0003"
        columns = {c["name"] for c in sa.inspect(engine).get_columns("outbox")}
        assert "raw" not in columns and "raw_format" not in columns
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            differences = compare_metadata(context, SQLModel.metadata)
        # Later migrations are not there yet at 0003 (0005: player columns; 0006: press).
        player_columns = ("add_column", None, "player")
        assert [
            d for d in differences if _table_of(d) not in LATER_TABLES and d[:3] != player_columns
        ] == []
        body = _table(engine, "outbox_body")
        with engine.connect() as connection:
            moved = connection.execute(
                sa.select(body.c.outbox_id, body.c.raw, body.c.raw_format).order_by(
                    body.c.outbox_id
                )
            ).all()
        assert [(i, bytes(raw), fmt) for i, raw, fmt in moved] == [
            (i, raw, fmt) for i, _, raw, fmt in before
        ]
        with session_scope(engine, write=False) as session:
            assert [outbox.raw_of(session, i) for i in ids] == [r[4] for r in ROWS]
            statuses = session.exec(select(Outbox.status).order_by(col(Outbox.id))).all()
            assert statuses == ["pending", "sent", "sent", "failed"]
        # The service prunes the sent body (not the pruned one again) in the new table.
        assert outbox.prune_sent(engine, datetime(2026, 12, 30, tzinfo=UTC), 14) == 1
        with session_scope(engine, write=False) as session:
            assert outbox.raw_of(session, ids[1]) == header_block(_SENT)
            assert outbox.raw_of(session, ids[0]) == _PENDING

        _downgrade(engine, "0002")
        assert current_revision(engine) == "0002"
        assert "outbox_body" not in sa.inspect(engine).get_table_names()
        after = _outbox_0002(engine)
        assert after == [
            before[0],
            (ids[1], "<m2@pbem.test>", header_block(_SENT), "pruned"),
            before[2],
            before[3],
        ]
    finally:
        engine.dispose()


def _keys(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        rows = connection.execute(
            sa.text("SELECT value FROM service_state WHERE key = 'sendlog_key'")
        ).all()
    return [value for (value,) in rows]


def test_0004_names_the_database_once_and_its_downgrade_forgets_the_name(db_url: str) -> None:
    """Migration 0004 (the send log's database name): one random name, kept by
    a second upgrade path; gone when downgraded; a new one when upgraded again.
    The name is what ``sendlog.fold_leftover`` compares a leftover log's with."""
    engine = make_engine(db_url)
    try:
        upgrade(engine, "0003")
        assert _keys(engine) == []
        upgrade(engine, "0004")
        assert current_revision(engine) == "0004"
        (first,) = _keys(engine)
        assert len(first) == 32 and int(first, 16) >= 0
        _downgrade(engine, "0003")
        assert _keys(engine) == []
        upgrade(engine, "0004")
        (second,) = _keys(engine)
        assert second != first
    finally:
        engine.dispose()
