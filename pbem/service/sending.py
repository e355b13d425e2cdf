"""Sending the outbox: lease due rows, hand them to the sender, record each result.

The promises (docs/RELIABILITY.md §3): a row is leased before it is sent,
so two workers never send it both; each accepted mail is committed as sent
before its connection sends another, so a killed worker leaves at most one
mail per connection to be sent again (with its Message-ID).

Where the leases and marks are kept is the ledger's business:

- ``TableLedger``: in the outbox table itself (PostgreSQL, whose row locks
  let a sender commit while an inbox transaction is open; an in-memory
  SQLite database);
- ``LogLedger``: on a SQLite file, in the send log beside it
  (pbem/store/sendlog.py), so the sender never waits for the database's one
  write lock, which the inbox holds while it handles a mail. Its marks are
  folded into the outbox table at the end of each run.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Protocol

from sqlalchemy import bindparam, or_, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.mail.retry import backoff_delay
from pbem.mail.transport import OutgoingMail, Sender, SendResult
from pbem.store import Outbox, OutboxBody, session_scope
from pbem.store.db import connection_scope, is_postgresql
from pbem.store.rawmail import unpack
from pbem.store.sendlog import SendLog, open_for
from pbem.vocab import OutboxStatus

log = logging.getLogger("pbem.outbox")

BATCH = 50  # rows leased at a time: one SMTP connection each (or [mail.smtp] connections)
_RETRY_CAP_SECONDS = 3600.0

# The statements of every sent mail, built once (bound at each execution).
_TABLE = Outbox.__table__  # type: ignore[attr-defined]
_SENT_VALUES = {
    "attempts": _TABLE.c.attempts + 1,
    "lease_owner": None,
    "lease_until": None,
    "status": OutboxStatus.SENT,
    "sent_at": bindparam("now", type_=_TABLE.c.sent_at.type),
    "last_error": None,
}
_MARK_SENT = (
    update(_TABLE)
    .where(_TABLE.c.id == bindparam("row_id"), _TABLE.c.lease_owner == bindparam("worker"))
    .values(**_SENT_VALUES)
)
# A mark of the send log, written into the table (once: a row already sent is left alone).
_FOLD_SENT = (
    update(_TABLE)
    .where(_TABLE.c.id == bindparam("row_id"), _TABLE.c.status == OutboxStatus.PENDING)
    .values(**_SENT_VALUES)
)
_RENEW = (
    update(_TABLE)
    .where(
        _TABLE.c.id.in_(bindparam("rest", expanding=True)),
        _TABLE.c.lease_owner == bindparam("worker"),
    )
    .values(lease_until=bindparam("until", type_=_TABLE.c.lease_until.type))
)


@dataclass
class SendReport:
    sent: int = 0
    deferred: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Lease:
    """Who sends, and for how long a row stays theirs."""

    worker: str
    seconds: float = 600.0
    retry_base_seconds: float = 60.0


class LeaseRanOut(Exception):
    """Rows of this batch are no longer ours: the batch stops before sending them."""


class Ledger(Protocol):
    """Where one sender's leases and marks are kept (see the module docstring)."""

    def lease(
        self, lease: Lease, now: datetime, envelope_from: str, retry_all: bool, at_least: int
    ) -> list[OutgoingMail]:
        """Up to BATCH due rows, now this worker's; none if fewer than ``at_least`` are due."""
        ...

    def sent(
        self, lease: Lease, row_id: int, now: datetime, rest: list[int], until: datetime
    ) -> tuple[bool, int]:
        """Record an acceptance and renew the lease of ``rest``, in one commit:
        (was the row still ours, how many of ``rest`` are no longer ours)."""
        ...

    def failed(
        self,
        lease: Lease,
        now: datetime,
        report: SendReport,
        result: SendResult,
        rest: list[int],
        until: datetime,
    ) -> int:
        """Record a refusal (for good, or to try again later); as ``sent``."""
        ...

    def release(self, lease: Lease, ids: list[int]) -> None:
        """Give back rows leased but never tried."""
        ...

    def fold(self) -> int:
        """Write what only the ledger knows into the outbox table; how many rows."""
        ...

    def close(self) -> None: ...


def ledger_for(engine: Engine) -> Ledger:
    """The send log on a SQLite file, the outbox table otherwise."""
    sendlog = open_for(engine)
    return TableLedger(engine) if sendlog is None else LogLedger(engine, sendlog)


def send_due(
    engine: Engine,
    sender: Sender,
    now: datetime,
    envelope_from: str,
    lease: Lease,
    *,
    retry_all: bool = False,
    report: SendReport | None = None,
    ledger: Ledger | None = None,
    at_least: int = 1,
) -> SendReport:
    """Send every due row, batch by batch, until none is left or the server fails.

    A temporary failure (server down, 4xx) ends the run: the rows wait with
    backoff. A TransportError (TLS or login refused: a setting is wrong)
    is raised after the leases it holds are given back. Given a ``ledger``,
    the caller folds and closes it (a sender running beside the inbox sends
    many runs and folds once); ``at_least`` rows must be due for a batch to go.
    """
    report = report or SendReport()
    own = ledger is None
    ledger = ledger or ledger_for(engine)
    try:
        _send_batches(ledger, sender, now, envelope_from, lease, retry_all, report, at_least)
        if own:
            ledger.fold()
    finally:
        if own:
            ledger.close()
    return report


def _send_batches(
    ledger: Ledger,
    sender: Sender,
    now: datetime,
    envelope_from: str,
    lease: Lease,
    retry_all: bool,
    report: SendReport,
    at_least: int,
) -> None:
    while True:
        leased = ledger.lease(lease, now, envelope_from, retry_all, at_least)
        if not leased:
            return
        results: list[SendResult] = []
        batch = _Batch([int(m.key) for m in leased], time.monotonic())
        record = partial(_record, ledger, lease, now, report, results, batch)
        try:
            sender.send(leased, on_result=record)
        except LeaseRanOut as exc:  # another worker has the rest: never send them too
            log.warning("%s", exc)
        finally:
            done = {int(r.key) for r in results}
            ledger.release(lease, [i for i in batch.ids if i not in done])
        temporary = [r for r in results if not r.ok and not r.permanent]
        if temporary:
            report.errors.append(temporary[0].error)
            return


@dataclass(frozen=True)
class _Batch:
    ids: list[int]  # the rows leased, in sending order
    started: float  # time.monotonic() when it was leased

    def lease_until(self, now: datetime, seconds: float) -> datetime:
        """A lease from this moment: ``now`` was the batch's start."""
        return now + timedelta(seconds=time.monotonic() - self.started + seconds)


def _record(
    ledger: Ledger,
    lease: Lease,
    now: datetime,
    report: SendReport,
    results: list[SendResult],
    batch: _Batch,
    result: SendResult,
) -> None:
    """One result, committed at once (before the next mail goes out), with the
    lease of the rows still to send renewed: however long the batch takes, no
    other worker takes them while this one works; if one did (this worker
    stalled past its lease), LeaseRanOut stops the batch."""
    results.append(result)
    done = {int(r.key) for r in results}
    rest = [i for i in batch.ids if i not in done]
    until = batch.lease_until(now, lease.seconds)
    if result.ok:
        marked, taken = ledger.sent(lease, int(result.key), now, rest, until)
        if marked:
            report.sent += 1
        else:
            log.warning("outbox %s: our lease ran out while sending it", result.key)
    else:
        taken = ledger.failed(lease, now, report, result, rest, until)
    if taken:
        raise LeaseRanOut(f"{taken} outbox rows of this batch were taken over by another worker")


def _record_failure(
    session: Session,
    lease: Lease,
    now: datetime,
    report: SendReport,
    row: Outbox,
    result: SendResult,
) -> None:
    row.attempts += 1
    row.lease_owner = None
    row.lease_until = None
    if result.permanent:
        row.status = OutboxStatus.FAILED
        row.last_error = result.error
        report.failed += 1
        log.warning(
            "outbox %s to %s failed for good: %s", row.message_id, row.recipient, result.error
        )
    else:
        delay = (
            backoff_delay(row.attempts, lease.retry_base_seconds, _RETRY_CAP_SECONDS)
            if lease.retry_base_seconds > 0
            else 0.0
        )
        row.next_attempt_at = now + timedelta(seconds=delay)
        row.last_error = result.error
        report.deferred += 1
    session.add(row)


def _due(now: datetime, retry_all: bool) -> Any:
    """The rows a sender may take: pending, not leased in the table, due."""
    query = select(Outbox.id).where(
        Outbox.status == OutboxStatus.PENDING,
        or_(col(Outbox.lease_until).is_(None), col(Outbox.lease_until) <= now),
    )
    if not retry_all:
        query = query.where(Outbox.next_attempt_at <= now)
    return query.order_by(col(Outbox.id))


def _mails(session: Session, ids: list[int], envelope_from: str) -> list[OutgoingMail]:
    """The leased rows still pending, as mails, in id order."""
    rows = session.exec(
        select(Outbox.id, Outbox.recipient, OutboxBody.raw, OutboxBody.raw_format)
        .join(OutboxBody, col(OutboxBody.outbox_id) == col(Outbox.id))
        .where(col(Outbox.id).in_(ids), Outbox.status == OutboxStatus.PENDING)
        .order_by(col(Outbox.id))
    )
    return [
        OutgoingMail(str(row_id), envelope_from, (recipient,), unpack(data, fmt))
        for row_id, recipient, data, fmt in rows
    ]


class TableLedger:
    """Leases and marks in the outbox table (``lease_owner``, ``lease_until``,
    ``status``): FOR UPDATE SKIP LOCKED on PostgreSQL."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def lease(
        self, lease: Lease, now: datetime, envelope_from: str, retry_all: bool, at_least: int
    ) -> list[OutgoingMail]:
        """A durable commit (synced to disk, and with it every earlier commit):
        nothing in the batch is sent before the rows, and all that made them,
        would survive a power loss."""
        until = now + timedelta(seconds=lease.seconds)
        with session_scope(self.engine) as session:
            query = _due(now, retry_all).limit(BATCH)
            if is_postgresql(session):
                query = query.with_for_update(skip_locked=True)
            ids = list(session.exec(query))
            if not ids or len(ids) < at_least:
                return []
            session.execute(
                update(Outbox)
                .where(col(Outbox.id).in_(ids))
                .values(lease_owner=lease.worker, lease_until=until)
            )
            return _mails(session, ids, envelope_from)

    def sent(
        self, lease: Lease, row_id: int, now: datetime, rest: list[int], until: datetime
    ) -> tuple[bool, int]:
        # Not synced to disk: losing this commit (power loss, OS crash; never a
        # kill) can only send this row again, with its Message-ID. The lease's
        # commit before the batch is durable, and with it every row it sends.
        with connection_scope(self.engine, durable=False) as connection:
            marked = connection.execute(
                _MARK_SENT, {"row_id": row_id, "worker": lease.worker, "now": now}
            )
            if not rest:
                return marked.rowcount == 1, 0
            renew = {"rest": rest, "worker": lease.worker, "until": until}
            kept = connection.execute(_RENEW, renew)
            return marked.rowcount == 1, len(rest) - kept.rowcount

    def failed(
        self,
        lease: Lease,
        now: datetime,
        report: SendReport,
        result: SendResult,
        rest: list[int],
        until: datetime,
    ) -> int:
        with session_scope(self.engine, durable=False) as session:
            row = session.get(Outbox, int(result.key))
            if row is None or row.lease_owner != lease.worker:
                log.warning("outbox %s: our lease ran out while sending it", result.key)
            else:
                _record_failure(session, lease, now, report, row, result)
            if not rest:
                return 0
            renew = {"rest": rest, "worker": lease.worker, "until": until}
            renewed = session.execute(_RENEW, renew)
            return len(rest) - renewed.rowcount  # type: ignore[attr-defined]

    def release(self, lease: Lease, ids: list[int]) -> None:
        if not ids:
            return
        with session_scope(self.engine, durable=False) as session:
            session.execute(
                update(Outbox)
                .where(col(Outbox.id).in_(ids), col(Outbox.lease_owner) == lease.worker)
                .values(lease_owner=None, lease_until=None)
            )

    def fold(self) -> int:
        return 0  # every mark is in the table already

    def close(self) -> None:
        pass  # nothing of its own is open: the engine is the caller's


class LogLedger:
    """Leases and marks in the send log beside a SQLite database.

    Its reads of the database are plain snapshots (WAL: they neither wait for
    nor block the inbox's write). ``after`` is how far this ledger has looked
    in the outbox during this run: a sender working beside the inbox, which
    folds only at the end, does not look again at the rows it sent already.
    """

    def __init__(self, engine: Engine, sendlog: SendLog) -> None:
        self.engine = engine
        self.sendlog = sendlog
        self.after = 0

    def lease(
        self, lease: Lease, now: datetime, envelope_from: str, retry_all: bool, at_least: int
    ) -> list[OutgoingMail]:
        until = now + timedelta(seconds=lease.seconds)
        taken: list[int] = []
        while len(taken) < BATCH:
            query = _due(now, retry_all).where(col(Outbox.id) > self.after).limit(2 * BATCH)
            with session_scope(self.engine, write=False) as session:
                page = [int(row_id) for row_id in session.exec(query)]
            if not taken and len(page) < at_least:
                return []
            if not page:
                break
            got = self.sendlog.claim(page, lease.worker, until, now, BATCH - len(taken))
            taken += got
            self.after = got[-1] if len(taken) == BATCH else page[-1]
            if len(page) < 2 * BATCH:
                break
        if not taken:
            return []
        # Read after the claim: a row another worker sent and folded before we
        # claimed it is no longer pending here, and is given back unsent.
        with session_scope(self.engine, write=False) as session:
            mails = _mails(session, taken, envelope_from)
        gone = set(taken) - {int(m.key) for m in mails}
        self.sendlog.give_back(sorted(gone), lease.worker)
        return mails

    def sent(
        self, lease: Lease, row_id: int, now: datetime, rest: list[int], until: datetime
    ) -> tuple[bool, int]:
        return self.sendlog.mark_sent(row_id, lease.worker, now, rest, until)

    def failed(
        self,
        lease: Lease,
        now: datetime,
        report: SendReport,
        result: SendResult,
        rest: list[int],
        until: datetime,
    ) -> int:
        """A refusal is rare: written into the table at once (waiting for the
        write lock), then the claim is given back; a kill between the two
        leaves a claim that runs out on a row no longer due."""
        row_id = int(result.key)
        if self.sendlog.holds(row_id, lease.worker):
            with session_scope(self.engine, durable=False) as session:
                row = session.get(Outbox, row_id)
                if row is not None:
                    _record_failure(session, lease, now, report, row, result)
            self.sendlog.give_back([row_id], lease.worker)
        else:
            log.warning("outbox %s: our lease ran out while sending it", row_id)
        return self.sendlog.renew(rest, lease.worker, until) if rest else 0

    def release(self, lease: Lease, ids: list[int]) -> None:
        back = self.sendlog.give_back(ids, lease.worker)
        if back:  # due again: this run looks at them again
            self.after = min(self.after, min(back) - 1)

    def fold(self) -> int:
        """Every worker's marks into the table, in one durable commit; then
        dropped from the log. A kill between the two folds them again later:
        a row already sent is not changed twice."""
        marks = self.sendlog.marks()
        if not marks:
            return 0
        with connection_scope(self.engine) as connection:
            connection.execute(
                _FOLD_SENT, [{"row_id": m.outbox_id, "now": m.sent_at} for m in marks]
            )
        self.sendlog.forget([m.outbox_id for m in marks])
        self.after = 0
        return len(marks)

    def close(self) -> None:
        self.sendlog.close()
