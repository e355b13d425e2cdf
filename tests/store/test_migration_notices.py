"""Migration 0007: the notice table.

A database at 0006 with mail in its outbox is upgraded: the table is there,
its schema the model's, empty (every mail decided before is in the outbox
already). Downgraded, it is gone and the outbox is as it was; upgraded
again, it is back. On SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

from pbem.store import current_revision, make_engine, upgrade
from tests.store.test_migration_press import _downgrade

NOW = datetime(2026, 11, 28, 3, 0, tzinfo=UTC)


def _one_outbox_row(engine: sa.Engine) -> None:
    meta = sa.MetaData()
    outbox = sa.Table("outbox", meta, autoload_with=engine)
    with engine.begin() as connection:
        connection.execute(
            outbox.insert().values(
                message_id="<m1@game.test>", game_id=None, kind="mail",
                recipient="ann@players.test", subject="Hello", raw_sha256="",
                status="pending", attempts=0, next_attempt_at=NOW, created_at=NOW,
            )
        )  # fmt: skip


def test_0007_adds_the_notice_table_and_downgrades_back(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        upgrade(engine, "0006")
        _one_outbox_row(engine)
        upgrade(engine, "0007")
        assert current_revision(engine) == "0007"
        assert "notice" in sa.inspect(engine).get_table_names()
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            differences = compare_metadata(context, SQLModel.metadata)
            assert [d for d in differences if "notice" in repr(d)] == []
            assert connection.execute(sa.text("SELECT count(*) FROM notice")).scalar_one() == 0

        _downgrade(engine, "0006")
        assert current_revision(engine) == "0006"
        assert "notice" not in sa.inspect(engine).get_table_names()
        with engine.connect() as connection:
            assert connection.execute(sa.text("SELECT count(*) FROM outbox")).scalar_one() == 1
        upgrade(engine, "0007")
        assert "notice" in sa.inspect(engine).get_table_names()
    finally:
        engine.dispose()
