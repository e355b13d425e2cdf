"""The outbox: every mail pbem sends waits here until a server has taken it.

Three promises, each by construction:

- A row is *leased* before it is sent, so several workers never send the
  same row (pbem/service/tell/sending.py: ``lease_owner`` and ``lease_until`` of
  this table, taken FOR UPDATE SKIP LOCKED on PostgreSQL).
- A row is marked sent right after the server accepted *it*, one row at a
  time, over one connection per batch. A worker killed between acceptance
  and that commit leaves one row leased; when the lease runs out it is sent
  again, with the same Message-ID, so mail clients fold the duplicate. At
  most one duplicate per kill; N with ``[mail.smtp] connections = N``
  (the batch shared over N connections, each row committed as above).
- Storage does not grow without bound: the rendered mail is kept
  compressed, and past the retention period a sent row keeps only its
  headers and the SHA-256 of the whole (``prune_sent``).

This module is the queue (enqueue, prune, what waits); sending it is
pbem/service/tell/sending.py, whose names are also reachable from here. The mail
itself is in ``outbox_body`` (OutboxBody), written at enqueue and at pruning
only: the leases and marks of the send path change the small ``outbox``
row, and SQLite does not rewrite the body's pages with it.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.service.tell.sending import (  # noqa: F401 - the send path, reachable as outbox.*
    BATCH,
    Lease,
    SendReport,
    send_due,
)
from pbem.store import Outbox, OutboxBody, session_scope
from pbem.store.db import is_postgresql
from pbem.store.rawmail import header_block, pack, unpack
from pbem.vocab import OutboxStatus, RawFormat

KEPT_KIND = "press"  # small, and the game site reads public press back: never pruned

_TABLE = Outbox.__table__  # type: ignore[attr-defined]


@functools.cache
def _insert_new(postgresql: bool) -> Any:
    """A new row, or nothing when its Message-ID is queued already.
    (RETURNING says which: a driver's rowcount of such an INSERT may be -1.)
    Built on first use: the PostgreSQL dialect is a long import that SQLite
    and an idle poll never need."""
    if postgresql:
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return (
            pg_insert(_TABLE)
            .on_conflict_do_nothing(index_elements=["message_id"])
            .returning(_TABLE.c.id)
        )
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return (
        sqlite_insert(_TABLE)
        .on_conflict_do_nothing(index_elements=["message_id"])
        .returning(_TABLE.c.id)
    )


_INSERT_BODY = insert(OutboxBody.__table__)  # type: ignore[attr-defined]


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
    statement = _insert_new(is_postgresql(session))
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


def unsent(session: Session, now: datetime) -> list[dict[str, object]]:
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
    """How much mail waits, is being sent (leased now), or failed for good."""
    waiting = session.exec(
        select(Outbox.lease_until, Outbox.created_at).where(Outbox.status == OutboxStatus.PENDING)
    ).all()
    sending = sum(1 for until, _ in waiting if until and until > now)
    oldest = min((created for _, created in waiting), default=None)
    failed = session.exec(select(func.count()).where(Outbox.status == OutboxStatus.FAILED)).one()
    return OutboxCounts(len(waiting) - sending, sending, int(failed), oldest)
