"""The send log beside a SQLite database (pbem/store/sendlog.py) and the
ledger that sends through it (pbem/service/sending.py, LogLedger).

What must hold: a row is leased by one worker at a time; a row marked sent
is never leased again, whoever asks and whenever (before and after its mark
is folded into the outbox table); a lease that ran out unsent is free; a
worker gives back only its own rows.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine.url import make_url

from pbem.mail.transport import OutgoingMail, SendResult
from pbem.service import outbox
from pbem.service.sending import BATCH, Lease, LogLedger, TableLedger, ledger_for
from pbem.store import init_db, session_scope
from pbem.store.sendlog import SUFFIX, Mark, SendLog, database_key, in_flight_for, path_for
from tests.sendlog_helpers import queue_alerts

NOW = datetime(2026, 11, 26, 2, 0, tzinfo=UTC)
LATER = NOW + timedelta(seconds=61)
UNTIL = NOW + timedelta(seconds=60)


@pytest.fixture
def log(tmp_path: Path) -> SendLog:
    return SendLog(tmp_path / "pbem.db-sendlog", "a database")


def test_where_the_log_lives() -> None:
    assert path_for(make_url("sqlite:////srv/pbem/pbem.db")) == Path("/srv/pbem/pbem.db" + SUFFIX)
    assert path_for(make_url("sqlite:///:memory:")) is None
    assert path_for(make_url("sqlite://")) is None
    assert path_for(make_url("postgresql+psycopg://u@localhost/pbem")) is None


def test_a_claim_is_one_workers_until_it_runs_out(log: SendLog) -> None:
    assert log.claim([1, 2, 3], "A", UNTIL, NOW, limit=2) == [1, 2]
    assert log.claim([1, 2, 3], "B", UNTIL, NOW, limit=5) == [3]
    assert log.claim([1, 2, 3], "C", UNTIL, NOW, limit=5) == []
    # at UNTIL itself the lease has run out (as the table's lease_until <= now)
    assert log.claim([1, 2, 3], "C", LATER, UNTIL, limit=5) == [1, 2, 3]
    assert log.in_flight(UNTIL) == (set(), {1: "C", 2: "C", 3: "C"})


def test_a_row_marked_sent_is_never_claimed_again(log: SendLog) -> None:
    log.claim([1, 2], "A", UNTIL, NOW, limit=5)
    assert log.mark_sent(1, "A", NOW, rest=[2], until=UNTIL) == (True, 0)
    far = NOW + timedelta(days=30)
    assert log.claim([1, 2], "B", far + timedelta(seconds=60), far, limit=5) == [2]
    assert log.marks() == [Mark(1, NOW)]
    # a mark of a row no longer ours: not marked, and the rest is counted as taken
    assert log.mark_sent(2, "A", NOW, rest=[], until=UNTIL) == (False, 0)
    assert log.holds(2, "B") and not log.holds(2, "A")


def test_marks_keep_their_moment_to_the_microsecond(log: SendLog) -> None:
    moment = NOW + timedelta(microseconds=123457)
    log.claim([7], "A", UNTIL, NOW, limit=1)
    log.mark_sent(7, "A", moment, rest=[], until=UNTIL)
    assert log.marks() == [Mark(7, moment)]
    log.forget([7])
    assert log.marks() == [] and log.in_flight(NOW) == (set(), {})


def test_renewal_says_how_many_rows_another_worker_took(log: SendLog) -> None:
    log.claim([1, 2, 3], "A", UNTIL, NOW, limit=3)
    log.claim([3], "B", LATER + timedelta(seconds=60), LATER, limit=1)  # A's ran out
    assert log.mark_sent(1, "A", LATER, rest=[2, 3], until=LATER + timedelta(seconds=60)) == (
        True,
        1,
    )
    assert log.renew([2, 3], "A", LATER) == 1


def test_a_worker_gives_back_only_its_own_unsent_rows(log: SendLog) -> None:
    log.claim([1, 2], "A", UNTIL, NOW, limit=2)
    log.claim([3], "B", UNTIL, NOW, limit=1)
    log.mark_sent(1, "A", NOW, rest=[2], until=UNTIL)
    assert log.give_back([1, 2, 3], "A") == [2]
    assert log.in_flight(NOW) == ({1}, {3: "B"})


def test_claims_of_more_rows_than_sqlite_binds_at_once(log: SendLog) -> None:
    ids = list(range(1, 1202))
    assert log.claim(ids, "A", UNTIL, NOW, limit=len(ids)) == ids
    assert log.give_back(ids, "A") == ids


# --- the ledger over a real database --------------------------------------------------


class Accepting:
    """A server that takes every mail; ``before`` runs before each."""

    def __init__(self, before: Callable[[OutgoingMail], None] = lambda m: None) -> None:
        self.before = before
        self.sent: list[str] = []

    def send(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None] | None = None
    ) -> list[SendResult]:
        results = []
        for message in messages:
            self.before(message)
            self.sent.append(message.key)
            results.append(SendResult(message.key, ok=True))
            if on_result is not None:
                on_result(results[-1])
        return results


def test_a_file_database_sends_through_its_log_memory_and_postgresql_through_the_table(
    tmp_path: Path,
) -> None:
    file_engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    memory_engine = init_db("sqlite://")
    assert isinstance(ledger_for(file_engine), LogLedger)
    assert isinstance(ledger_for(memory_engine), TableLedger)


def test_a_row_sent_and_folded_by_another_worker_while_we_looked_is_not_sent_again(
    tmp_path: Path,
) -> None:
    """Worker W sends row 1 and folds it between our read of the due rows and
    our claim: the claim succeeds (W's mark is gone from the log), and the
    read after it, which sees row 1 sent in the table, gives it back unsent."""
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    queue_alerts(engine, 3, NOW)
    path = tmp_path / ("pbem.db" + SUFFIX)
    key = str(database_key(engine))

    class RacedLog(SendLog):
        def claim(self, candidates, owner, until, now, limit):  # type: ignore[no-untyped-def]
            w = LogLedger(engine, SendLog(path, key))
            w.sendlog.claim([1], "W", until, now, limit=1)
            w.sendlog.mark_sent(1, "W", now, rest=[], until=until)
            assert w.fold() == 1
            return super().claim(candidates, owner, until, now, limit)

    ours = LogLedger(engine, RacedLog(path, key))
    leased = ours.lease(Lease("A"), NOW, "game@pbem.test", retry_all=False, at_least=1)
    assert [m.key for m in leased] == ["2", "3"]
    assert ours.sendlog.in_flight(NOW) == (set(), {2: "A", 3: "A"})


def test_a_sender_beside_the_inbox_folds_once_and_each_row_goes_once(tmp_path: Path) -> None:
    """Runs with a ledger of their own and ``at_least``: nothing below a batch
    goes; the cursor does not look at rows it sent again; one fold at the end."""
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    server = Accepting()
    ledger = ledger_for(engine)
    lease = Lease("A")
    queue_alerts(engine, BATCH - 1, NOW)
    report = outbox.send_due(
        engine, server, NOW, "g@pbem.test", lease, ledger=ledger, at_least=BATCH
    )
    assert (report.sent, server.sent) == (0, [])
    queue_more = [f"<n{n}@pbem.test>" for n in range(BATCH + 5)]
    with session_scope(engine) as session:
        for mid in queue_more:
            outbox.enqueue(
                session, message_id=mid, game_id=None, kind="gm_alert", recipient="gm@pbem.test",
                subject="n", raw=b"Subject: n\n\nn\n", in_reply_to=None, now=NOW,
            )  # fmt: skip
    report = outbox.send_due(
        engine, server, NOW, "g@pbem.test", lease, ledger=ledger, at_least=BATCH
    )
    assert report.sent == 2 * BATCH  # two full batches; 4 rows wait
    assert in_flight_for(engine, NOW)[0] == set(range(1, 2 * BATCH + 1))
    report = outbox.send_due(engine, server, NOW, "g@pbem.test", lease)  # own ledger: folds
    assert report.sent == 4
    assert server.sent == [str(i) for i in range(1, 2 * BATCH + 5)]
    assert in_flight_for(engine, NOW) == (set(), {})
    with session_scope(engine, write=False) as session:
        assert outbox.counts(session, NOW).pending == 0
    ledger.close()


def test_a_log_left_by_another_database_at_the_same_path_is_dropped(tmp_path: Path) -> None:
    """A worker killed with a mark in the log; the database is then deleted and
    made again. Its row 1 is another mail: sent, not taken for the old one."""
    first = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    queue_alerts(first, 1, NOW)
    ledger = ledger_for(first)
    assert isinstance(ledger, LogLedger)
    (mail,) = ledger.lease(Lease("A"), NOW, "g@pbem.test", retry_all=False, at_least=1)
    assert ledger.sent(Lease("A"), int(mail.key), NOW, [], UNTIL) == (True, 0)
    ledger.close()  # killed before the fold: the mark stays in the log
    first.dispose()
    for leftover in tmp_path.glob("pbem.db*"):
        if SUFFIX not in leftover.name:
            leftover.unlink()
    second = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    assert in_flight_for(second, NOW) == (set(), {})  # not this database's log
    queue_alerts(second, 1, NOW)
    server = Accepting()
    assert outbox.send_due(second, server, NOW, "g@pbem.test", Lease("B")).sent == 1
    assert server.sent == ["1"]


def test_status_counts_read_the_log_a_mark_not_folded_is_sent_a_claim_is_sending(
    tmp_path: Path,
) -> None:
    """`pbem status` and `pbem outbox` while a sender works (its marks not yet
    folded): what the log holds is shown, not the table's stale "pending"."""
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    queue_alerts(engine, 4, NOW)
    ledger = ledger_for(engine)
    assert isinstance(ledger, LogLedger)
    leased = ledger.lease(Lease("A"), NOW, "g@pbem.test", retry_all=False, at_least=1)
    assert [m.key for m in leased] == ["1", "2", "3", "4"]
    ledger.sent(Lease("A"), 1, NOW, [2, 3, 4], UNTIL)
    ledger.release(Lease("A"), [4])
    with session_scope(engine, write=False) as session:
        counts = outbox.counts(session, NOW)
        waiting = outbox.unsent(session, NOW)
    assert (counts.pending, counts.sending, counts.failed) == (1, 2, 0)
    assert [(w["id"], w["leased_by"]) for w in waiting] == [(2, "A"), (3, "A"), (4, None)]
    with session_scope(engine, write=False) as session:  # the leases run out: waiting again
        assert outbox.counts(session, LATER).pending == 3
    ledger.close()
