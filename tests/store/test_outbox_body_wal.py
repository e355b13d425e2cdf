"""Sending a mail does not rewrite its body (issue 16).

SQLite rewrites a row's whole payload, overflow pages included, when one of
its columns changes size; with the ~35 KB body in the outbox row, each mark
as sent put ~74 KB into the WAL. The body is in outbox_body now, and this
test reads the WAL itself: with automatic checkpoints off, every page the
send path writes is there as a frame (a 24-byte header naming the page, and
the page), so "the body was not rewritten" is "no frame names a page of
outbox_body" (the pages dbstat lists for it), with the count of frames exact.
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
from collections import Counter
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event

from pbem.service.tell import outbox
from pbem.store import init_db, session_scope
from tests.service.test_outbox_lease import Recorder

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
MAILS = 20
_WAL_HEADER, _FRAME_HEADER = 32, 24


def _mail(n: int) -> bytes:
    """~40 KB that zlib cannot shrink (a hash chain): a body of ~10 overflow pages."""
    chunks, seed = [], f"mail {n}".encode()
    for _ in range(1250):
        seed = hashlib.sha256(seed).digest()
        chunks.append(seed)
    return f"Subject: m{n}\r\n\r\n".encode() + b"".join(chunks)


def _frames(wal: Path, start: int = 0) -> list[int]:
    """The page number of every frame in the WAL from byte ``start`` on."""
    data = wal.read_bytes()
    page_size = struct.unpack(">I", data[8:12])[0]
    offset = max(start, _WAL_HEADER)
    pages = []
    while offset + _FRAME_HEADER + page_size <= len(data):
        pages.append(struct.unpack(">I", data[offset : offset + 4])[0])
        offset += _FRAME_HEADER + page_size
    return pages


def _pages_of(db: Path) -> dict[int, str]:
    """Which table or index each page of the database belongs to (overflow pages too),
    as a reader sees it (the WAL's frames included)."""
    with closing(sqlite3.connect(db)) as con:
        return {int(p): str(n) for n, p in con.execute("SELECT name, pageno FROM dbstat")}


def test_sending_writes_the_small_row_never_the_body(tmp_path: Path) -> None:
    db = tmp_path / "pbem.db"
    engine = init_db(f"sqlite:///{db}")
    with session_scope(engine) as session:
        for n in range(MAILS):
            outbox.enqueue(
                session, message_id=f"<m{n}@pbem.test>", game_id=None, kind="report",
                recipient=f"p{n}@players.test", subject=f"m{n}", raw=_mail(n),
                in_reply_to=None, now=NOW,
            )  # fmt: skip
    engine.dispose()

    @event.listens_for(engine, "connect")
    def _no_checkpoints(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute("PRAGMA wal_autocheckpoint = 0")

    with closing(sqlite3.connect(db)) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    owner = _pages_of(db)
    body_pages = {p for p, name in owner.items() if name == "outbox_body"}
    assert len(body_pages) >= MAILS * 10  # the bodies are where the bytes are
    wal = db.with_name("pbem.db-wal")
    try:
        delivered: Counter[str] = Counter()
        lease = outbox.Lease("A", seconds=60, retry_base_seconds=0)
        report = outbox.send_due(engine, Recorder(delivered), NOW, "game@pbem.test", lease)
        assert (report.sent, len(delivered)) == (MAILS, MAILS)
        written = _frames(wal)
        sent_bytes = wal.stat().st_size
        page_size = struct.unpack(">I", wal.read_bytes()[8:12])[0]
        assert sent_bytes == _WAL_HEADER + len(written) * (_FRAME_HEADER + page_size)
        # Every page written is the outbox table's or one of its indexes' (or the
        # database header, page 1), before the send or after it (a leaf split).
        after = _pages_of(db)
        small = {"outbox", "ix_outbox_status_next_attempt_at", "sqlite_schema"}
        assert {after[p] for p in written} <= small | {"sqlite_autoindex_outbox_1"}
        assert not (body_pages | {p for p, name in after.items() if name == "outbox_body"}) & set(
            written
        )
        # The marks folded in (the send log beside a SQLite file; the table's
        # own lease and MAILS marks before it): under 3 pages a mail. The body
        # in the row made it 10 or more (its overflow pages) for each mark alone.
        assert len(written) < 3 * MAILS

        # The same reading sees a body rewritten: pruning writes outbox_body's pages.
        later = NOW + timedelta(days=30)
        assert outbox.prune_sent(engine, later, 14) == MAILS
        pruned = _frames(wal, sent_bytes)
        assert body_pages & set(pruned)
    finally:
        engine.dispose()
