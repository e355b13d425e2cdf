"""Queueing test mail, and reading what a sender committed over plain sqlite3
connections (as a server thread of a test can): the outbox table and the send
log beside it."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from sqlalchemy.engine import Engine

from pbem.service import outbox
from pbem.store import session_scope
from pbem.store.sendlog import SUFFIX


def queue_alerts(engine: Engine, count: int, now: datetime) -> None:
    """``count`` small mails to the GM in the outbox, ``<m0@pbem.test>``, ... (rows 1, 2, ...)."""
    with session_scope(engine) as session:
        for n in range(count):
            outbox.enqueue(
                session, message_id=f"<m{n}@pbem.test>", game_id=None, kind="gm_alert",
                recipient="gm@pbem.test", subject=f"m{n}", raw=b"Subject: x\n\nx\n",
                in_reply_to=None, now=now,
            )  # fmt: skip


def sent_ids(database: Path) -> set[int]:
    """Outbox rows committed as sent: in the table, or marked in the send log."""
    with sqlite3.connect(database) as db:
        sent = {i for (i,) in db.execute("SELECT id FROM outbox WHERE status = 'sent'")}
    log = database.with_name(database.name + SUFFIX)
    if log.exists():
        with sqlite3.connect(log) as db:
            query = "SELECT outbox_id FROM send_claim WHERE sent_us IS NOT NULL"
            sent |= {i for (i,) in db.execute(query)}
    return sent


def take_over(database: Path, row_id: int, owner: str) -> None:
    """Another worker now holds ``row_id``'s lease (as if ours had run out)."""
    log = database.with_name(database.name + SUFFIX)
    with sqlite3.connect(log) as db:
        db.execute("UPDATE send_claim SET owner = ? WHERE outbox_id = ?", (owner, row_id))


def holder(database: Path, row_id: int) -> str | None:
    """Who holds ``row_id``'s lease in the send log (None: nobody)."""
    log = database.with_name(database.name + SUFFIX)
    with sqlite3.connect(log) as db:
        row = db.execute(
            "SELECT owner FROM send_claim WHERE outbox_id = ? AND sent_us IS NULL", (row_id,)
        ).fetchone()
    return row[0] if row else None
