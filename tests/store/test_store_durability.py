"""Which commits are synced to disk (docs/RELIABILITY.md, section 8).

SQLite in WAL mode: ``synchronous = FULL`` syncs the WAL at a commit (and
with it every earlier commit), ``NORMAL`` does not (a killed process loses
nothing, a power loss may lose the last commits). The outbox's commit per
sent mail may be lost that way (the mail goes out again, same Message-ID);
the lease before a batch is sent may not. Each commit's level is read on
its own connection at the moment it commits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from pbem.mail.transport import OutgoingMail, SendResult
from pbem.service import outbox
from pbem.service.sending import TableLedger
from pbem.store import ServiceState, init_db, session_scope
from pbem.store.sendlog import SUFFIX, SendLog, open_for
from tests.sendlog_helpers import queue_alerts

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
FULL, NORMAL = 2, 1


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    yield engine
    engine.dispose()


def levels_of_commits(engine: Engine) -> list[int]:
    """The synchronous level of every commit from now on, in order."""
    levels: list[int] = []

    @event.listens_for(engine, "commit")
    def _on_commit(connection: Any) -> None:
        levels.append(connection.exec_driver_sql("PRAGMA synchronous").scalar())

    return levels


def test_commits_are_durable_unless_asked(engine: Engine) -> None:
    levels = levels_of_commits(engine)
    with session_scope(engine) as session:
        session.add(ServiceState(key="a", value="1"))
    with session_scope(engine, durable=False) as session:
        session.add(ServiceState(key="b", value="2"))
    with session_scope(engine, durable=False) as session:
        session.add(ServiceState(key="c", value="3"))
    with session_scope(engine) as session:  # the same pooled connection, set back
        session.add(ServiceState(key="d", value="4"))
    with session_scope(engine, write=False) as session:
        session.exec(text("SELECT 1"))  # type: ignore[call-overload]
    assert levels == [FULL, NORMAL, NORMAL, FULL, FULL]
    with session_scope(engine, write=False) as session:
        query = "SELECT key FROM service_state WHERE key != 'sendlog_key' ORDER BY key"
        keys = session.exec(text(query)).all()  # type: ignore[call-overload]
    assert [k for (k,) in keys] == ["a", "b", "c", "d"]


class Accepting:
    """An SMTP server that takes every mail; ``during`` sees each result's moment."""

    def __init__(self, during: Callable[[], None]) -> None:
        self.during = during

    def send(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None] | None = None
    ) -> list[SendResult]:
        results = []
        for message in messages:
            self.during()
            results.append(SendResult(message.key, ok=True))
            if on_result is not None:
                on_result(results[-1])
        return results


def test_the_lease_before_a_batch_is_durable_the_commit_per_sent_mail_is_not(
    engine: Engine,
) -> None:
    """The outbox table as the ledger (PostgreSQL's way, here on SQLite)."""
    rows = outbox.BATCH + 3  # two batches: two leases
    queue_alerts(engine, rows, NOW)
    levels = levels_of_commits(engine)
    marks: list[int] = []  # how many commits had happened when each mail went out

    sent = outbox.send_due(
        engine, Accepting(lambda: marks.append(len(levels))), NOW, "game@pbem.test",
        outbox.Lease("A", seconds=60, retry_base_seconds=0), ledger=TableLedger(engine),
    )  # fmt: skip
    assert sent.sent == rows
    # lease (FULL), 50 results (NORMAL), lease (FULL), 3 results (NORMAL), empty lease
    assert levels == [FULL] + [NORMAL] * 50 + [FULL] + [NORMAL] * 3 + [FULL]
    # every mail went out after a durable lease and the results before it
    assert marks[0] == 1 and marks[outbox.BATCH] == 52


def levels_of_writes(engine: Engine) -> list[int]:
    """The synchronous level of every commit that changed a row, from now on."""
    levels: list[int] = []

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        changes = connection.exec_driver_sql("SELECT total_changes()").scalar()
        connection.info["changes_at_begin"] = changes

    @event.listens_for(engine, "commit")
    def _on_commit(connection: Any) -> None:
        changes = connection.exec_driver_sql("SELECT total_changes()").scalar()
        if changes != connection.info.pop("changes_at_begin"):
            levels.append(connection.exec_driver_sql("PRAGMA synchronous").scalar())

    return levels


def test_with_the_send_log_the_database_is_written_once_per_run_and_durably(
    engine: Engine, tmp_path: Path
) -> None:
    """A SQLite file's sender commits its leases and marks in the send log, not
    synced (a mark lost in a power loss sends that mail again, same
    Message-ID); the database itself gets one write per run, the marks folded
    in, synced. Every mail it sends was queued by a synced commit."""
    rows = outbox.BATCH + 3
    queue_alerts(engine, rows, NOW)
    writes = levels_of_writes(engine)
    log_writes: list[int] = []  # database writes so far, when each mail went out

    sent = outbox.send_due(
        engine, Accepting(lambda: log_writes.append(len(writes))), NOW, "game@pbem.test",
        outbox.Lease("A", seconds=60, retry_base_seconds=0),
    )  # fmt: skip
    assert sent.sent == rows
    assert log_writes == [0] * rows  # nothing written to the database while sending
    assert writes == [FULL]  # the fold, at the end
    sendlog = open_for(engine)
    assert sendlog is not None and sendlog.marks() == []  # folded, then forgotten
    with session_scope(engine, write=False) as session:
        done = session.exec(text("SELECT count(*) FROM outbox WHERE status = 'sent'")).one()  # type: ignore[call-overload]
    assert done[0] == rows


def test_in_the_send_log_a_lease_is_synced_and_a_mark_is_not(tmp_path: Path) -> None:
    """The lease syncs the log's earlier marks with it: a power loss can undo
    the marks of one batch at most."""
    sendlog = SendLog(tmp_path / ("pbem.db" + SUFFIX), "a database")
    commits: list[int] = []  # the synchronous level at each commit

    def note(statement: str) -> None:
        if statement == "COMMIT":
            commits.append(sendlog._db.execute("PRAGMA synchronous").fetchone()[0])

    sendlog._db.set_trace_callback(note)
    until = NOW.replace(hour=10)
    assert sendlog.claim([1, 2], "A", until, NOW, limit=2) == [1, 2]
    sendlog.mark_sent(1, "A", NOW, rest=[2], until=until)
    sendlog.mark_sent(2, "A", NOW, rest=[], until=until)
    assert sendlog.claim([3], "A", until, NOW, limit=1) == [3]
    sendlog._db.set_trace_callback(None)
    assert commits == [FULL, NORMAL, NORMAL, FULL]
