"""Queueing test mail, and reading what a sender committed over plain sqlite3
connections (as a server thread of a test can): the outbox table, the one
record of what was sent."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from sqlalchemy.engine import Engine

from pbem.service.tell import outbox
from pbem.store import session_scope


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
    """Outbox rows committed as sent."""
    with sqlite3.connect(database) as db:
        return {i for (i,) in db.execute("SELECT id FROM outbox WHERE status = 'sent'")}


def take_over(database: Path, row_id: int, owner: str) -> None:
    """Another worker now holds ``row_id``'s lease (as if ours had run out)."""
    with sqlite3.connect(database) as db:
        db.execute("UPDATE outbox SET lease_owner = ? WHERE id = ?", (owner, row_id))
