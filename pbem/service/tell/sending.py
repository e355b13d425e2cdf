"""Sending the outbox: lease due rows, hand them to the sender, record each result.

The promises (docs/RELIABILITY.md §3): a row is leased before it is sent,
so two workers never send it both; each accepted mail is committed as sent
before its connection sends another, so a killed worker leaves at most one
mail per connection to be sent again (with its Message-ID).

The outbox table is the one record of what was sent: a lease is the row's
``lease_owner`` and ``lease_until`` (taken FOR UPDATE SKIP LOCKED on
PostgreSQL), a mark its ``status``, on every database.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from sqlalchemy import bindparam, or_, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.mail.retry import backoff_delay
from pbem.mail.transport import OutgoingMail, Sender, SendResult
from pbem.store import Outbox, OutboxBody, session_scope
from pbem.store.db import connection_scope, is_postgresql
from pbem.store.rawmail import unpack
from pbem.vocab import OutboxStatus

log = logging.getLogger("pbem.outbox")

BATCH = 50  # rows leased at a time: one SMTP connection each (or [mail.smtp] connections)
_RETRY_CAP_SECONDS = 3600.0

# The statements of every sent mail, built once (bound at each execution).
_TABLE = Outbox.__table__  # type: ignore[attr-defined]
_MARK_SENT = (
    update(_TABLE)
    .where(_TABLE.c.id == bindparam("row_id"), _TABLE.c.lease_owner == bindparam("worker"))
    .values(
        attempts=_TABLE.c.attempts + 1,
        lease_owner=None,
        lease_until=None,
        status=OutboxStatus.SENT,
        sent_at=bindparam("now", type_=_TABLE.c.sent_at.type),
        last_error=None,
    )
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


def send_due(
    engine: Engine,
    sender: Sender,
    now: datetime,
    envelope_from: str,
    lease: Lease,
    *,
    retry_all: bool = False,
    report: SendReport | None = None,
) -> SendReport:
    """Send every due row, batch by batch, until none is left or the server fails.

    A temporary failure (server down, 4xx) ends the run: the rows wait with
    backoff. A TransportError (TLS or login refused: a setting is wrong)
    is raised after the leases it holds are given back.
    """
    report = report or SendReport()
    while True:
        leased = _lease(engine, lease, now, envelope_from, retry_all)
        if not leased:
            return report
        results: list[SendResult] = []
        batch = _Batch([int(m.key) for m in leased], time.monotonic())
        record = partial(_record, engine, lease, now, report, results, batch)
        try:
            sender.send(leased, on_result=record)
        except LeaseRanOut as exc:  # another worker has the rest: never send them too
            log.warning("%s", exc)
        finally:
            done = {int(r.key) for r in results}
            _release(engine, lease, [i for i in batch.ids if i not in done])
        temporary = [r for r in results if not r.ok and not r.permanent]
        if temporary:
            report.errors.append(temporary[0].error)
            return report


@dataclass(frozen=True)
class _Batch:
    ids: list[int]  # the rows leased, in sending order
    started: float  # time.monotonic() when it was leased

    def lease_until(self, now: datetime, seconds: float) -> datetime:
        """A lease from this moment: ``now`` was the batch's start."""
        return now + timedelta(seconds=time.monotonic() - self.started + seconds)


def _lease(
    engine: Engine, lease: Lease, now: datetime, envelope_from: str, retry_all: bool
) -> list[OutgoingMail]:
    """Up to BATCH due rows, now this worker's. A durable commit (synced to
    disk, and with it every earlier commit): nothing in the batch is sent
    before the rows, and all that made them, would survive a power loss."""
    until = now + timedelta(seconds=lease.seconds)
    with session_scope(engine) as session:
        query = _due(now, retry_all).limit(BATCH)
        if is_postgresql(session):
            query = query.with_for_update(skip_locked=True)
        ids = list(session.exec(query))
        if not ids:
            return []
        session.execute(
            update(Outbox)
            .where(col(Outbox.id).in_(ids))
            .values(lease_owner=lease.worker, lease_until=until)
        )
        return _mails(session, ids, envelope_from)


def _record(
    engine: Engine,
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
        marked, taken = _sent(engine, lease, int(result.key), now, rest, until)
        if marked:
            report.sent += 1
        else:
            log.warning("outbox %s: our lease ran out while sending it", result.key)
    else:
        taken = _failed(engine, lease, now, report, result, rest, until)
    if taken:
        raise LeaseRanOut(f"{taken} outbox rows of this batch were taken over by another worker")


def _sent(
    engine: Engine, lease: Lease, row_id: int, now: datetime, rest: list[int], until: datetime
) -> tuple[bool, int]:
    """Mark the row sent and renew the lease of ``rest``, in one commit: (was
    the row still ours, how many of ``rest`` are no longer ours).

    Not synced to disk: losing this commit (power loss, OS crash; never a
    kill) can only send this row again, with its Message-ID. The lease's
    commit before the batch is durable, and with it every row it sends."""
    with connection_scope(engine, durable=False) as connection:
        marked = connection.execute(
            _MARK_SENT, {"row_id": row_id, "worker": lease.worker, "now": now}
        )
        if not rest:
            return marked.rowcount == 1, 0
        renew = {"rest": rest, "worker": lease.worker, "until": until}
        kept = connection.execute(_RENEW, renew)
        return marked.rowcount == 1, len(rest) - kept.rowcount


def _failed(
    engine: Engine,
    lease: Lease,
    now: datetime,
    report: SendReport,
    result: SendResult,
    rest: list[int],
    until: datetime,
) -> int:
    """Record a refusal (for good, or to try again later) as ``_sent`` records
    an acceptance; how many of ``rest`` are no longer ours."""
    with session_scope(engine, durable=False) as session:
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


def _release(engine: Engine, lease: Lease, ids: list[int]) -> None:
    """Give back rows leased but never tried."""
    if not ids:
        return
    with session_scope(engine, durable=False) as session:
        session.execute(
            update(Outbox)
            .where(col(Outbox.id).in_(ids), col(Outbox.lease_owner) == lease.worker)
            .values(lease_owner=None, lease_until=None)
        )


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
