"""Migrations: empty -> head on both engines, the migrated schema equals the models."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel, select

from pbem.store import (
    DatabaseError,
    Game,
    current_revision,
    head_revision,
    init_db,
    make_engine,
    migrate,
    session_scope,
    upgrade,
)
from pbem.store.migrate import MIGRATIONS_DIR

REPO = Path(__file__).resolve().parents[2]

TABLES = {
    "alembic_version",
    "game",
    "inbound_message",
    "join_request",
    "mailbox_checkpoint",
    "order_entry",
    "outbox",
    "outbox_body",
    "pending_orders",
    "player",
    "press",
    "notice",
    "rate_counter",
    "seat_holder",
    "service_state",
    "turn_result",
}


def schema_differences(engine: Engine) -> list[object]:
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return compare_metadata(context, SQLModel.metadata)


def test_head_is_the_latest_migration() -> None:
    assert head_revision() == "0008"


def test_scanned_head_is_alembics_head() -> None:
    """The start-up reading of the migration files agrees with alembic's own."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    assert ScriptDirectory.from_config(config).get_current_head() == "0008"
    assert migrate._scanned_head() == "0008"


def test_current_database_does_not_import_alembic(tmp_path: Path) -> None:
    """Opening a database already at head costs no alembic import (~0.35 s at start-up)."""
    url = f"sqlite:///{tmp_path}/g.db"
    init_db(url).dispose()
    probe = (
        "import sys\n"
        "from pbem.store import current_revision, init_db\n"
        f"engine = init_db({url!r})\n"
        "print(current_revision(engine), 'alembic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "0008 False\n"


def test_upgrade_from_empty_to_head(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        assert current_revision(engine) is None
        assert inspect(engine).get_table_names() == []
        upgrade(engine)
        assert current_revision(engine) == head_revision()
        assert set(inspect(engine).get_table_names()) == TABLES
    finally:
        engine.dispose()


def test_upgrade_accepts_a_url(db_url: str) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_migrated_schema_equals_the_models(db_url: str) -> None:
    engine = init_db(db_url)
    try:
        assert schema_differences(engine) == []
    finally:
        engine.dispose()


def test_schema_comparison_sees_a_missing_index(db_url: str) -> None:
    """The comparison above can fail: drop one index and it is reported."""
    engine = init_db(db_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("DROP INDEX ix_player_address"))
        differences = schema_differences(engine)
        assert [(d[0], d[1].name) for d in differences] == [("add_index", "ix_player_address")]
    finally:
        engine.dispose()


def test_init_db_is_idempotent_and_keeps_data(db_url: str) -> None:
    engine = init_db(db_url)
    with session_scope(engine) as session:
        session.add(
            Game(
                name="alpha",
                map_name="classic",
                map_text="x",
                preset="classic",
                dice_version="pbem-dice-v1",
                secret="00",
                commitment="11",
            )
        )
    engine.dispose()
    again = init_db(db_url)
    try:
        assert current_revision(again) == head_revision()
        with session_scope(again, write=False) as session:
            assert session.exec(select(Game.name)).all() == ["alpha"]
        assert schema_differences(again) == []
    finally:
        again.dispose()


def test_init_db_refuses_a_database_newer_than_pbem(db_url: str) -> None:
    engine = init_db(db_url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    shown = engine.url.render_as_string(hide_password=True)
    engine.dispose()
    with pytest.raises(DatabaseError) as caught:
        init_db(db_url)
    assert str(caught.value) == (
        f"database {shown} is at schema revision '9999', which this version of pbem does "
        f"not know (its newest is '{head_revision()}'); upgrade pbem"
    )


def test_init_db_refuses_tables_made_without_migrations(db_url: str) -> None:
    engine = make_engine(db_url)
    SQLModel.metadata.create_all(engine)
    shown = engine.url.render_as_string(hide_password=True)
    engine.dispose()
    with pytest.raises(DatabaseError) as caught:
        init_db(db_url)
    assert str(caught.value) == (
        f"database {shown} has pbem's tables but no migration record (alembic_version); "
        "it was not made by `pbem` and will not be touched"
    )


def test_sqlite_foreign_keys_are_on_again_after_migrating(tmp_path: Path) -> None:
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    try:
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    finally:
        engine.dispose()


def test_memory_database_migrates() -> None:
    engine = init_db("sqlite:///:memory:")
    assert current_revision(engine) == head_revision()
    assert schema_differences(engine) == []


def test_migrations_need_no_alembic_ini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """They run from any folder, with only the files inside the package."""
    monkeypatch.chdir(tmp_path)
    assert MIGRATIONS_DIR.parent == Path(__file__).resolve().parents[2] / "pbem" / "store"
    assert sorted(p.name for p in MIGRATIONS_DIR.glob("*.py*")) == [
        "__init__.py",
        "env.py",
        "script.py.mako",
    ]
    engine = init_db("sqlite:///pbem.db")
    try:
        assert current_revision(engine) == head_revision()
        assert (tmp_path / "pbem.db").is_file()
    finally:
        engine.dispose()


# Two daemons are two processes (Alembic's op/context are per process, not per thread).
_DAEMON = """
import sys, time
from pathlib import Path
from pbem.store import init_db
url, ready, go = sys.argv[1:]
Path(ready).touch()
while not Path(go).exists():
    time.sleep(0.001)
init_db(url).dispose()
"""


@pytest.mark.integration
def test_two_daemons_starting_at_once_both_succeed(pg_db_url: str, tmp_path: Path) -> None:
    """The advisory lock makes the second wait for the first, then find the schema made."""
    go = tmp_path / "go"
    readies = [tmp_path / f"ready{i}" for i in range(2)]
    daemons = [
        subprocess.Popen(
            [sys.executable, "-c", _DAEMON, pg_db_url, str(ready), str(go)],
            cwd=REPO,
            stderr=subprocess.PIPE,
            text=True,
        )
        for ready in readies
    ]
    while not all(ready.exists() for ready in readies):
        time.sleep(0.01)
    go.touch()  # both start migrating now
    errors = [daemon.communicate()[1] for daemon in daemons]
    assert [daemon.returncode for daemon in daemons] == [0, 0], errors
    engine = make_engine(pg_db_url)
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_init_db_on_an_unreachable_server() -> None:
    # Port 1 on loopback: nothing listens there, the connection is refused at once.
    with pytest.raises(DatabaseError) as caught:
        init_db("postgresql://pbem:hunter2@127.0.0.1:1/pbem")
    assert str(caught.value).startswith(
        "cannot connect to database postgresql+psycopg://pbem:***@127.0.0.1:1/pbem: "
    )


def test_an_upgrade_keeps_a_copy_of_a_sqlite_database_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A GM who upgrades pbem learns that the database moved on (an older pbem
    refuses it from now on) and finds the database as it was beside it."""
    path = tmp_path / "pbem.db"
    url = f"sqlite:///{path}"
    upgrade(url, "0001")  # as an older pbem left it
    with caplog.at_level("WARNING", logger="pbem.store"):
        engine = init_db(url)
    assert current_revision(engine) == head_revision()
    kept = tmp_path / "pbem.db.rev0001.bak"
    assert current_revision(make_engine(f"sqlite:///{kept}")) == "0001"
    assert caplog.messages == [
        f"database sqlite:///{path} upgraded from schema revision 0001 to {head_revision()}: "
        f"an older pbem cannot open it any more; the database as it was is kept in {kept}"
    ]
    caplog.clear()
    init_db(url)  # at head: nothing to say, no copy
    assert caplog.messages == []
    files = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm")))
    assert files == ["pbem.db", "pbem.db.rev0001.bak"]


def test_a_new_database_is_no_upgrade(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="pbem.store"):
        init_db(f"sqlite:///{tmp_path / 'new.db'}")
    assert caplog.messages == [] and not list(tmp_path.glob("*.bak"))
