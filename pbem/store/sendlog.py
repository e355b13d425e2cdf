"""The send log a SQLite database may still have from an older pbem, folded
into the outbox table once.

pbem kept, beside a SQLite file, the outbox's leases and "sent" marks in a
small file of its own (``<database>-sendlog``, table ``send_claim``; written
by pbem up to schema revision 0007), folded into the outbox table at the end of
each send run. A worker stopped or killed before its fold left marks there:
mails the server accepted that the table still calls pending. The outbox
table is now the one record of what was sent, so what such a file says is
written into it once, as that fold wrote it, and the file is set aside
(``<database>-sendlog.folded``); otherwise those mails would go out again.

``fold_leftover`` runs at every start (``init_db``: `pbem init`, each poll
and daemon); without the file it costs one ``stat``. A claim not run out is
carried over as the table's lease (its worker may still be sending it); a
log that names another database (one deleted and made again at the same
path) is set aside unread, as the old code dropped it.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import bindparam, or_, select, update
from sqlalchemy.engine import URL, Engine
from sqlmodel import col

from pbem.store.db import connection_scope
from pbem.store.errors import DatabaseError
from pbem.store.models import Outbox, ServiceState
from pbem.vocab import OutboxStatus

log = logging.getLogger("pbem.store")

SUFFIX = "-sendlog"
FOLDED = ".folded"  # the file, once folded: kept for the operator to read or delete
KEY = "sendlog_key"  # service_state: the random name of the database a log belongs to
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED")

_TABLE = Outbox.__table__  # type: ignore[attr-defined]
# A mark, as the old fold wrote it (once: a row already sent is left alone).
_FOLD_SENT = (
    update(_TABLE)
    .where(_TABLE.c.id == bindparam("row_id"), _TABLE.c.status == OutboxStatus.PENDING)
    .values(
        attempts=_TABLE.c.attempts + 1,
        lease_owner=None,
        lease_until=None,
        status=OutboxStatus.SENT,
        sent_at=bindparam("sent_at", type_=_TABLE.c.sent_at.type),
        last_error=None,
    )
)
# A claim still running, as the table's lease (unless the table has a live one).
_CARRY_LEASE = (
    update(_TABLE)
    .where(
        _TABLE.c.id == bindparam("row_id"),
        _TABLE.c.status == OutboxStatus.PENDING,
        or_(
            _TABLE.c.lease_until.is_(None),
            _TABLE.c.lease_until <= bindparam("now", type_=_TABLE.c.lease_until.type),
        ),
    )
    .values(
        lease_owner=bindparam("owner"),
        lease_until=bindparam("until", type_=_TABLE.c.lease_until.type),
    )
)


def path_for(url: URL | Engine) -> Path | None:
    """Where this database's send log was kept; None for a database that never
    had one (PostgreSQL, an in-memory SQLite database)."""
    if isinstance(url, Engine):
        url = url.url
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ":memory:"
    if database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).expanduser().with_name(Path(database).name + SUFFIX)


def _moment(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def fold_leftover(engine: Engine) -> int:
    """Fold the send log beside this database, if one is left, into the
    outbox table, then set it aside; how many marks were folded."""
    path = path_for(engine)
    if path is None or not path.exists():
        return 0
    try:
        db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    except sqlite3.Error as exc:
        raise _unreadable(path, exc) from exc
    folded, mode = 0, "busy"
    try:
        folded = _fold(engine, path, db)
        # Its -wal written back and removed; refused while another connection has it.
        (mode,) = db.execute("PRAGMA journal_mode = DELETE").fetchone()
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorname", "") not in _BUSY:
            raise _unreadable(path, exc) from exc
    finally:
        db.close()
    if mode != "delete":  # a worker of the older pbem still has it open
        log.warning("%s is still in use: folded again and set aside at a later start", path)
        return folded
    try:
        os.replace(path, path.with_name(path.name + FOLDED))
    except FileNotFoundError:
        pass  # another worker starting at the same moment set it aside first
    return folded


def _fold(engine: Engine, path: Path, db: sqlite3.Connection) -> int:
    """The marks and live claims of ``db`` written into the outbox table, in
    one durable commit (a kill before it: the next start folds again)."""
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    if not {"meta", "send_claim"} <= tables:
        return 0  # made, and never written: its worker died while opening it
    rows = db.execute("SELECT outbox_id, owner, until_us, sent_us FROM send_claim").fetchall()
    named = db.execute("SELECT value FROM meta WHERE name = 'database'").fetchone()
    with connection_scope(engine) as connection:
        key = connection.execute(
            select(col(ServiceState.value)).where(col(ServiceState.key) == KEY)
        ).scalar()
        if named is None or key is None or named[0] != key:
            log.warning("%s was another database's: %d rows not folded", path, len(rows))
            return 0
        now = datetime.now(UTC)
        marks = [
            {"row_id": i, "sent_at": _moment(sent)} for i, _, _, sent in rows if sent is not None
        ]
        claims = [
            {"row_id": i, "owner": owner, "until": _moment(until), "now": now}
            for i, owner, until, sent in rows
            if sent is None and _moment(until) > now
        ]
        if marks:
            connection.execute(_FOLD_SENT, marks)
        if claims:
            connection.execute(_CARRY_LEASE, claims)
    log.info("%s folded into the outbox table: %d sent, %d leased", path, len(marks), len(claims))
    return len(marks)


def _unreadable(path: Path, exc: sqlite3.Error) -> DatabaseError:
    return DatabaseError(
        f"{path} cannot be read as pbem's send log ({exc}): it may hold mails already "
        "sent; move it away only if it is not pbem's"
    )
