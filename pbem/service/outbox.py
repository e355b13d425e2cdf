"""The outbox: every mail pbem sends waits here until a server has taken it.

Three promises, each by construction:

- A row is *leased* before it is sent (``lease_owner``/``lease_until``, taken
  with FOR UPDATE SKIP LOCKED on PostgreSQL, under SQLite's single writer
  otherwise), so several workers never send the same row.
- A row is marked sent right after the server accepted *it*, one row at a
  time, over one connection per batch. A worker killed between acceptance
  and that commit leaves one row leased; when the lease runs out it is sent
  again, with the same Message-ID, so mail clients fold the duplicate. At
  most one duplicate per kill; N with ``[mail.smtp] connections = N``
  (the batch shared over N connections, each row committed as above).
- Storage does not grow without bound: the rendered mail is kept
  compressed, and past the retention period a sent row keeps only its
  headers and the SHA-256 of the whole (``prune_sent``).

The mail itself is in ``outbox_body`` (OutboxBody), written at enqueue and
at pruning only: the leases and marks of the send path change the small
``outbox`` row, and SQLite does not rewrite the body's pages with it.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from sqlalchemy import bindparam, func, insert, or_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.mail.retry import backoff_delay
from pbem.mail.transport import OutgoingMail, Sender, SendResult
from pbem.store import Outbox, OutboxBody, session_scope
from pbem.store.db import connection_scope, is_postgresql
from pbem.store.rawmail import header_block, pack, unpack
from pbem.vocab import OutboxStatus, RawFormat

log = logging.getLogger("pbem.outbox")

BATCH = 50  # rows leased at a time: one SMTP connection each (or [mail.smtp] connections)
KEPT_KIND = "press"  # small, and the game site reads public press back: never pruned
_RETRY_CAP_SECONDS = 3600.0
# UPDATEs of the send path touch no object of the session: nothing to keep in step
_PLAIN = {"synchronize_session": False}

# The two statements of every sent mail, built once (bound at each execution).
_TABLE = Outbox.__table__  # type: ignore[attr-defined]
# A new row, or nothing when its Message-ID is queued already.
# (RETURNING says which: a driver's rowcount of such an INSERT may be -1.)
_INSERT_NEW_SQLITE = (
    sqlite_insert(_TABLE)
    .on_conflict_do_nothing(index_elements=["message_id"])
    .returning(_TABLE.c.id)
)
_INSERT_NEW_PG = (
    pg_insert(_TABLE).on_conflict_do_nothing(index_elements=["message_id"]).returning(_TABLE.c.id)
)
_INSERT_BODY = insert(OutboxBody.__table__)  # type: ignore[attr-defined]
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


def enqueue(
    session: Session,
    *,
    message_id: str,
    game_id: int | None,
    kind: str,
    recipient: str,
    subject: str,
    raw: bytes,
    in_reply_to: str | None,
    now: datetime,
) -> bool:
    """Add one mail (False if that Message-ID is already queued: a mail is queued once).

    One INSERT that does nothing on a Message-ID already there (the unique
    constraint decides, in this transaction), instead of a search and an ORM
    object flushed: 7 of these per order mail."""
    row = {
        "message_id": message_id,
        "game_id": game_id,
        "kind": kind,
        "recipient": recipient,
        "subject": subject,
        "raw_sha256": hashlib.sha256(raw).hexdigest(),
        "in_reply_to": in_reply_to,
        "status": OutboxStatus.PENDING,
        "attempts": 0,
        "next_attempt_at": now,
        "created_at": now,
    }
    statement = _INSERT_NEW_PG if is_postgresql(session) else _INSERT_NEW_SQLITE
    new = session.execute(statement, row).first()
    if new is None:
        return False
    data, fmt = pack(raw)  # only for a mail queued now: a repeat costs no compression
    session.execute(_INSERT_BODY, {"outbox_id": new[0], "raw": data, "raw_format": fmt})
    return True


def raw_of(session: Session, row: Outbox | int) -> bytes:
    """The mail as queued (headers only once pruned), of a row or a row id."""
    row_id = row if isinstance(row, int) else row.id
    body = session.get(OutboxBody, row_id)
    if body is None:
        raise LookupError(f"outbox row {row_id} has no body (outbox_body)")
    return unpack(body.raw, body.raw_format)


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


def _lease(
    engine: Engine, lease: Lease, now: datetime, envelope_from: str, retry_all: bool
) -> list[OutgoingMail]:
    """Take up to BATCH due rows for this worker.

    A durable commit (synced to disk, and with it every earlier commit):
    nothing in the batch is sent before the rows, and all that made them,
    would survive a power loss."""
    until = now + timedelta(seconds=lease.seconds)
    with session_scope(engine) as session:
        query = select(Outbox.id).where(
            Outbox.status == OutboxStatus.PENDING,
            or_(col(Outbox.lease_until).is_(None), col(Outbox.lease_until) <= now),
        )
        if not retry_all:
            query = query.where(Outbox.next_attempt_at <= now)
        query = query.order_by(col(Outbox.id)).limit(BATCH)
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
        rows = session.exec(
            select(Outbox.id, Outbox.recipient, OutboxBody.raw, OutboxBody.raw_format)
            .join(OutboxBody, col(OutboxBody.outbox_id) == col(Outbox.id))
            .where(col(Outbox.id).in_(ids))
            .order_by(col(Outbox.id))
        )
        return [
            OutgoingMail(str(row_id), envelope_from, (recipient,), unpack(data, fmt))
            for row_id, recipient, data, fmt in rows
        ]


class LeaseRanOut(Exception):
    """Rows of this batch are no longer ours: the batch stops before sending them."""


@dataclass(frozen=True)
class _Batch:
    ids: list[int]  # the rows leased, in sending order
    started: float  # time.monotonic() when it was leased

    def lease_until(self, now: datetime, seconds: float) -> datetime:
        """A lease from this moment: ``now`` was the batch's start."""
        return now + timedelta(seconds=time.monotonic() - self.started + seconds)


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
    # Not synced to disk: losing this commit (power loss, OS crash; never a
    # kill) can only send this row again, with its Message-ID. The lease's
    # commit before the batch is durable, and with it every row it sends.
    if result.ok:  # the usual case: two prepared statements, no ORM session
        with connection_scope(engine, durable=False) as connection:
            marked = connection.execute(
                _MARK_SENT, {"row_id": int(result.key), "worker": lease.worker, "now": now}
            )
            if marked.rowcount == 1:
                report.sent += 1
            else:
                log.warning("outbox %s: our lease ran out while sending it", result.key)
            if not rest:
                return
            until = batch.lease_until(now, lease.seconds)
            kept = connection.execute(
                _RENEW, {"rest": rest, "worker": lease.worker, "until": until}
            )
            taken = len(rest) - kept.rowcount
    else:
        with session_scope(engine, durable=False) as session:
            _record_failure(session, lease, now, report, int(result.key), result)
            if not rest:
                return
            renewed = session.execute(
                update(Outbox)
                .where(col(Outbox.id).in_(rest), col(Outbox.lease_owner) == lease.worker)
                .values(lease_until=batch.lease_until(now, lease.seconds)),
                execution_options=_PLAIN,
            )
            taken = len(rest) - renewed.rowcount  # type: ignore[attr-defined]
    if taken:
        raise LeaseRanOut(f"{taken} outbox rows of this batch were taken over by another worker")


def _record_failure(
    session: Session,
    lease: Lease,
    now: datetime,
    report: SendReport,
    row_id: int,
    result: SendResult,
) -> None:
    row = session.get(Outbox, row_id)
    if row is None or row.lease_owner != lease.worker:
        log.warning("outbox %s: our lease ran out while sending it", row_id)
        return
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


def _release(engine: Engine, lease: Lease, ids: list[int]) -> None:
    """Give back rows leased but never tried (the run stopped before them)."""
    if not ids:
        return
    with session_scope(engine, durable=False) as session:
        session.execute(
            update(Outbox)
            .where(col(Outbox.id).in_(ids), col(Outbox.lease_owner) == lease.worker)
            .values(lease_owner=None, lease_until=None)
        )


def prune_sent(engine: Engine, now: datetime, retention_days: float, limit: int = 500) -> int:
    """Drop the body of mail sent more than ``retention_days`` ago (headers
    and the hash stay); returns how many rows were pruned. Press is kept:
    it is small, and the game site shows public press for the whole game."""
    cutoff = now - timedelta(days=retention_days)
    with session_scope(engine) as session:
        bodies = list(
            session.exec(
                select(OutboxBody)
                .join(Outbox, col(Outbox.id) == col(OutboxBody.outbox_id))
                .where(
                    Outbox.status == OutboxStatus.SENT,
                    col(Outbox.sent_at) < cutoff,
                    OutboxBody.raw_format != RawFormat.PRUNED,
                    Outbox.kind != KEPT_KIND,
                )
                .order_by(col(OutboxBody.outbox_id))
                .limit(limit)
            )
        )
        for body in bodies:
            body.raw = header_block(unpack(body.raw, body.raw_format))
            body.raw_format = RawFormat.PRUNED
            session.add(body)
        return len(bodies)


def unsent(session: Session) -> list[dict[str, object]]:
    """Mail not sent yet (waiting, being sent, or refused for good), oldest first."""
    rows = session.exec(
        select(Outbox).where(Outbox.status != OutboxStatus.SENT).order_by(col(Outbox.id))
    )
    return [
        {
            "id": r.id,
            "status": r.status,
            "recipient": r.recipient,
            "subject": r.subject,
            "attempts": r.attempts,
            "next_attempt_at": r.next_attempt_at.isoformat(),
            "last_error": r.last_error,
            "leased_by": r.lease_owner,
        }
        for r in rows
    ]


@dataclass(frozen=True)
class OutboxCounts:
    pending: int
    sending: int
    failed: int
    oldest_pending: datetime | None


def counts(session: Session, now: datetime) -> OutboxCounts:
    """How much mail waits, is being sent, or failed for good."""
    by_status = dict(
        session.exec(select(Outbox.status, func.count()).group_by(Outbox.status)).all()
    )
    sending = session.exec(
        select(func.count()).where(
            Outbox.status == OutboxStatus.PENDING, col(Outbox.lease_until) > now
        )
    ).one()
    oldest = session.exec(
        select(func.min(Outbox.created_at)).where(Outbox.status == OutboxStatus.PENDING)
    ).one()
    pending = int(by_status.get(OutboxStatus.PENDING, 0)) - int(sending)
    return OutboxCounts(pending, int(sending), int(by_status.get(OutboxStatus.FAILED, 0)), oldest)
