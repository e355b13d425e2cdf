"""Schema migrations (Alembic), shipped inside the package and run from Python.

No alembic.ini is read: the configuration is built here, so an installed
wheel migrates its database just like a checkout. ``init_db`` is what the
service calls at start; ``upgrade`` and ``current_revision`` are for the
CLI and tests.

For developers, after changing models.py:
    python -m pbem.store.migrate new "what changed"
writes pbem/store/migrations/versions/NNNN_what_changed.py by autogenerate
(against a scratch SQLite database at head); read and tidy it before use.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect
from sqlalchemy.engine import Connection, Engine

from pbem.store.db import make_engine, reader, safe_url, translate_errors
from pbem.store.errors import DatabaseError
from pbem.store.sendlog import fold_leftover

if TYPE_CHECKING:  # alembic costs ~0.35 s to import; an up-to-date database never needs it
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

# An upgrade of an existing database is said (a warning: the CLI prints it on
# stderr, the daemon logs it), so a GM learns that the older pbem can no longer
# open it and where the copy taken before it is.
log = logging.getLogger("pbem.store")

# PostgreSQL advisory lock key taken while migrating, so two daemons starting
# at once do not both try to create the tables ("pbem" in ASCII).
_PG_MIGRATION_LOCK = 0x7062656D


# The two lines of a migration file that place it in the chain (see versions/).
_REVISION_LINE = re.compile(r'^revision: str = "([^"]+)"$', re.MULTILINE)
_DOWN_LINE = re.compile(r'^down_revision: [^=]+= (?:"([^"]+)"|None)$', re.MULTILINE)


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest migration this version of pbem knows.

    Read from the migration files' ``revision``/``down_revision`` lines without
    importing alembic (start-up time); alembic decides when that reading is not a
    single plain chain.
    """
    head = _scanned_head()
    if head is None:
        from alembic.script import ScriptDirectory

        head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None, f"no migrations found in {MIGRATIONS_DIR}"
    return head


def _scanned_head() -> str | None:
    """The head of a single linear chain of migration files; None if it is anything else."""
    revisions: list[str] = []
    downs: set[str] = set()
    for path in sorted((MIGRATIONS_DIR / "versions").glob("[0-9]*.py")):
        text = path.read_text(encoding="utf-8")
        revision, down = _REVISION_LINE.findall(text), _DOWN_LINE.search(text)
        if len(revision) != 1 or down is None:
            return None
        revisions.append(revision[0])
        if down[1] is not None:
            downs.add(down[1])
    heads = [r for r in revisions if r not in downs]
    if len(heads) != 1 or len(downs) != len(revisions) - 1 or not downs <= set(revisions):
        return None
    return heads[0]


def current_revision(engine: Engine) -> str | None:
    """The migration the database is at; None for a database pbem never migrated.

    A plain query of alembic's version table (the same table alembic reads), so
    that checking an up-to-date database does not import alembic.
    """
    with translate_errors(engine), reader(engine).connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        rows = connection.exec_driver_sql("SELECT version_num FROM alembic_version").fetchall()
        if len(rows) > 1:
            from alembic.runtime.migration import MigrationContext

            return MigrationContext.configure(connection).get_current_revision()
        return str(rows[0][0]) if rows else None


def upgrade(engine_or_url: Engine | str, revision: str = "head") -> None:
    """Migrate the database up to ``revision``, in one transaction.

    On SQLite, foreign keys are off while migrating (batch mode rebuilds
    tables, and dropping a referenced table would otherwise fail) and
    checked once at the end, before the commit.
    """
    if isinstance(engine_or_url, str):
        engine = make_engine(engine_or_url)
        try:
            _upgrade(engine, revision)
        finally:
            engine.dispose()
    else:
        _upgrade(engine_or_url, revision)


def _upgrade(engine: Engine, revision: str) -> None:
    from alembic import command
    from alembic.util.exc import CommandError

    sqlite = engine.dialect.name == "sqlite"
    with translate_errors(engine), engine.connect() as connection:
        if sqlite:
            _sqlite_pragma(connection, "PRAGMA foreign_keys = OFF")
        try:
            with connection.begin():
                if not sqlite:
                    connection.exec_driver_sql(
                        f"SELECT pg_advisory_xact_lock({_PG_MIGRATION_LOCK})"
                    )
                try:
                    command.upgrade(_config(connection), revision)
                except CommandError as err:
                    raise DatabaseError(
                        f"cannot migrate database {safe_url(engine)}: {err}"
                    ) from err
                if sqlite:
                    _check_foreign_keys(connection)
        finally:
            if sqlite:
                _sqlite_pragma(connection, "PRAGMA foreign_keys = ON")


def _sqlite_pragma(connection: Connection, pragma: str) -> None:
    """Run a PRAGMA outside any transaction (where SQLite ignores foreign_keys)."""
    driver = connection.connection.driver_connection
    assert driver is not None
    driver.execute(pragma)


def _check_foreign_keys(connection: Connection) -> None:
    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        tables = sorted({row[0] for row in broken})
        raise DatabaseError(
            f"migration left rows pointing at missing rows in: {', '.join(tables)}; "
            "nothing was changed"
        )


def init_db(url: str) -> Engine:
    """An engine for ``url`` whose database is at the latest schema.

    Creates the tables in an empty database, upgrades one behind head,
    leaves one at head alone. Refuses, with a reason, a database newer than
    this pbem or one holding pbem's tables without a migration record.
    """
    engine = make_engine(url)
    current = current_revision(engine)
    head = head_revision()
    if current != head:
        _bring_to_head(engine, current, head)
    fold_leftover(engine)  # an older pbem's send log, once (pbem/store/sendlog.py)
    return engine


def _bring_to_head(engine: Engine, current: str | None, head: str) -> None:
    """Upgrade from ``current``, after the checks of ``init_db``."""
    if current is None:
        with translate_errors(engine):
            tables = set(inspect(engine).get_table_names())
        if "game" in tables:
            raise DatabaseError(
                f"database {safe_url(engine)} has pbem's tables but no migration record "
                "(alembic_version); it was not made by `pbem` and will not be touched"
            )
    else:
        from alembic.script import ScriptDirectory
        from alembic.util.exc import CommandError

        try:
            ScriptDirectory.from_config(_config()).get_revision(current)
        except CommandError as err:
            raise DatabaseError(
                f"database {safe_url(engine)} is at schema revision {current!r}, which this "
                f"version of pbem does not know (its newest is {head!r}); upgrade pbem"
            ) from err
    kept = _keep_a_copy(engine, current) if current is not None else None
    upgrade(engine)
    if current is not None:
        where = (
            f"; the database as it was is kept in {kept}"
            if kept
            else " (back up a PostgreSQL database before upgrading pbem: docs/STORE.md)"
        )
        log.warning(
            "database %s upgraded from schema revision %s to %s: an older pbem cannot "
            "open it any more%s",
            safe_url(engine),
            current,
            head,
            where,
        )


def _keep_a_copy(engine: Engine, current: str) -> Path | None:
    """A SQLite database file is copied (SQLite's online backup, consistent even
    while another process reads it) beside itself before its schema moves on:
    ``pbem.db`` -> ``pbem.db.rev0001.bak``, never over an earlier copy."""
    name = engine.url.database
    if engine.dialect.name != "sqlite" or not name or name == ":memory:":
        return None
    source = Path(name)
    if not source.is_file():
        return None
    target = source.with_name(f"{source.name}.rev{current}.bak")
    number = 1
    while target.exists():
        number += 1
        target = source.with_name(f"{source.name}.rev{current}.{number}.bak")
    old, copy = sqlite3.connect(source), sqlite3.connect(target)
    try:
        old.backup(copy)
    finally:
        copy.close()
        old.close()
    return target


def new_revision(message: str) -> Path:
    """Write a new migration by comparing the models with a scratch database at head."""
    from alembic import command

    with tempfile.TemporaryDirectory() as scratch:
        engine = make_engine(f"sqlite:///{scratch}/scratch.db")
        upgrade(engine)
        number = 1 + max(
            (int(p.name[:4]) for p in (MIGRATIONS_DIR / "versions").glob("[0-9]*.py")),
            default=0,
        )
        with engine.begin() as connection:
            script = command.revision(
                _config(connection),
                message=message,
                autogenerate=True,
                rev_id=f"{number:04d}",
            )
        engine.dispose()
    assert script is not None and not isinstance(script, list)
    return Path(script.path)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "new":
        sys.exit('usage: python -m pbem.store.migrate new "what changed"')
    print(new_revision(sys.argv[2]))
