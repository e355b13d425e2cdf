"""An upgrade from a pbem that kept a SQLite database's "sent" marks in a send
log beside it (pbem/store/sendlog.py): the marks it left land in the outbox
table at the first start, and no mail they name is sent again.

tests/data/sendlog/ holds a send log written by that pbem itself (c49a4cd;
tests/data/sendlog/made_by.py.txt is the script): a worker leased rows 1-3,
its marks of rows 1 and 2 were committed, and it was SIGKILLed (its marks
only in the -wal); another worker's claim of row 4 ran out long ago. The
database it belongs to is named ``KEY``.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from pbem.mail.transport import OutgoingMail, SendResult
from pbem.service.tell import outbox
from pbem.store import Outbox, init_db, session_scope, upgrade
from pbem.store.db import make_engine
from pbem.store.errors import DatabaseError
from pbem.vocab import OutboxStatus
from tests.outbox_helpers import queue_alerts

FIXTURE = Path(__file__).parents[1] / "data" / "sendlog"
KEY = "c0ffee00c0ffee00c0ffee00c0ffee00"
LOG = "pbem.db-sendlog"
QUEUED = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
SENT_1 = datetime(2026, 11, 27, 9, 0, 1, 123456, tzinfo=UTC)
SENT_2 = datetime(2026, 11, 27, 9, 0, 2, 654321, tzinfo=UTC)
OLD_LEASE = datetime(2099, 1, 1, tzinfo=UTC)  # the killed worker's claim of row 3


class Accepting:
    """A server that takes every mail, noting the outbox row of each."""

    def __init__(self) -> None:
        self.sent: list[int] = []

    def send(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None] | None = None
    ) -> list[SendResult]:
        results = []
        for message in messages:
            self.sent.append(int(message.key))
            results.append(SendResult(message.key, ok=True))
            if on_result is not None:
                on_result(results[-1])
        return results


def old_database(folder: Path, key: str = KEY) -> str:
    """A database as the older pbem left it: at revision 0006, named ``key``,
    five mails queued (rows 1-5), its send log beside it; the URL."""
    url = f"sqlite:///{folder / 'pbem.db'}"
    engine = make_engine(url)
    upgrade(engine, "0006")
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE service_state SET value = :key WHERE key = 'sendlog_key'"), {"key": key}
        )
    queue_alerts(engine, 5, QUEUED)
    engine.dispose()
    for part in FIXTURE.glob(LOG + "*"):
        shutil.copyfile(part, folder / part.name)
    return url


def rows(engine: Engine) -> dict[int, tuple[str, int, datetime | None, str | None]]:
    """Each outbox row: (status, attempts, sent_at, lease_owner)."""
    with session_scope(engine, write=False) as session:
        found = session.exec(select(Outbox).order_by(col(Outbox.id))).all()
        return {r.id or 0: (r.status, r.attempts, r.sent_at, r.lease_owner) for r in found}


def test_the_first_start_folds_the_marks_and_no_marked_mail_goes_again(tmp_path: Path) -> None:
    engine = init_db(old_database(tmp_path))  # `pbem init`, or the first poll's start
    before = rows(engine)
    assert before[1] == (OutboxStatus.SENT, 1, SENT_1, None)  # to the microsecond
    assert before[2] == (OutboxStatus.SENT, 1, SENT_2, None)
    assert before[3][:2] == (OutboxStatus.PENDING, 0) and before[3][3] == "old-worker"
    assert before[4] == before[5] == (OutboxStatus.PENDING, 0, None, None)
    # set aside once folded: its -wal written back into it, nothing left to fold again
    assert sorted(p.name for p in tmp_path.glob(LOG + "*")) == [LOG + ".folded"]
    server = Accepting()
    now = datetime.now(UTC)
    assert outbox.send_due(engine, server, now, "g@pbem.test", outbox.Lease("new")).sent == 2
    assert server.sent == [4, 5]  # 1 and 2 were sent; 3 is the old worker's until its lease ends
    with session_scope(engine, write=False) as session:
        assert outbox.counts(session, datetime.now(UTC)).sending == 1
    sent = rows(engine)
    engine.dispose()
    again = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")  # the next start: nothing to fold
    assert rows(again) == sent
    later = datetime(2099, 1, 1, 0, 0, 1, tzinfo=UTC)  # the old claim has run out
    assert outbox.send_due(again, server, later, "g@pbem.test", outbox.Lease("new")).sent == 1
    assert server.sent == [4, 5, 3]
    again.dispose()


def test_a_fold_cut_short_is_done_again_and_changes_nothing_twice(tmp_path: Path) -> None:
    """Killed after the fold's commit, before the file was set aside: the next
    start folds the same marks again, and a row already sent is left alone."""
    url = old_database(tmp_path)
    engine = init_db(url)
    first = rows(engine)
    engine.dispose()
    (tmp_path / (LOG + ".folded")).rename(tmp_path / LOG)
    again = init_db(url)
    assert rows(again) == first
    again.dispose()


def test_a_log_an_older_worker_still_has_open_is_folded_and_set_aside_later(
    tmp_path: Path,
) -> None:
    url = old_database(tmp_path)
    older = sqlite3.connect(tmp_path / LOG)  # a worker of the older pbem, still running
    older.execute("SELECT count(*) FROM send_claim").fetchone()
    try:
        engine = init_db(url)
        assert rows(engine)[1][0] == OutboxStatus.SENT
        assert (tmp_path / LOG).exists()  # not moved from under it
        engine.dispose()
    finally:
        older.close()
    init_db(url).dispose()
    assert sorted(p.name for p in tmp_path.glob(LOG + "*")) == [LOG + ".folded"]


def test_a_log_of_another_database_at_the_same_path_is_set_aside_unread(tmp_path: Path) -> None:
    """The database was deleted and made again: row 1 is another mail, sent."""
    engine = init_db(old_database(tmp_path, key="another database"))
    assert {status for status, _, _, _ in rows(engine).values()} == {OutboxStatus.PENDING}
    assert [p.name for p in tmp_path.glob(LOG + "*")] == [LOG + ".folded"]
    server = Accepting()
    outbox.send_due(engine, server, datetime.now(UTC), "g@pbem.test", outbox.Lease("new"))
    assert server.sent == [1, 2, 3, 4, 5]
    engine.dispose()


def test_a_file_that_is_no_send_log_stops_the_start(tmp_path: Path) -> None:
    """Something else at that path may hide mails already sent: pbem will not guess."""
    (tmp_path / LOG).write_bytes(b"not a database at all, " * 100)
    with pytest.raises(DatabaseError, match="cannot be read as pbem's send log"):
        init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    assert (tmp_path / LOG).exists()


def test_databases_that_never_had_a_send_log_start_as_before(tmp_path: Path) -> None:
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    assert list(tmp_path.glob(LOG + "*")) == []
    engine.dispose()
    init_db("sqlite://").dispose()
