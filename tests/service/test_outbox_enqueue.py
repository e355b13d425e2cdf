"""A mail is queued once: the second INSERT of a Message-ID does nothing.

``outbox.enqueue`` is one INSERT ... ON CONFLICT DO NOTHING (issue 16: it
was a search and an ORM object flushed, 7 times per order mail), so the
unique constraint on the Message-ID decides, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlmodel import col, select

from pbem.service.tell import outbox
from pbem.store import Outbox, OutboxBody, init_db, session_scope
from pbem.vocab import OutboxStatus

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _enqueue(session: object, message_id: str, body: bytes, now: datetime) -> bool:
    return outbox.enqueue(
        session,  # type: ignore[arg-type]
        message_id=message_id,
        game_id=None,
        kind="gm_alert",
        recipient="gm@pbem.test",
        subject=body.decode(),
        raw=b"Subject: x\n\n" + body + b"\n",
        in_reply_to="<orders@players.test>",
        now=now,
    )


def test_a_message_id_is_queued_once_with_its_first_content(db_url: str) -> None:
    engine = init_db(db_url)
    with session_scope(engine) as session:
        assert _enqueue(session, "<a@pbem.test>", b"first", NOW)
        assert not _enqueue(session, "<a@pbem.test>", b"second", NOW)  # same transaction
        assert _enqueue(session, "<b@pbem.test>", b"other", NOW)
    with session_scope(engine) as session:  # a later transaction
        assert not _enqueue(session, "<a@pbem.test>", b"third", NOW + timedelta(hours=1))
    with session_scope(engine, write=False) as session:
        rows = session.exec(select(Outbox).order_by(col(Outbox.id))).all()
        assert [r.message_id for r in rows] == ["<a@pbem.test>", "<b@pbem.test>"]
        first = rows[0]
        assert outbox.raw_of(session, first) == b"Subject: x\n\nfirst\n"
        assert outbox.raw_of(session, rows[1].id or 0) == b"Subject: x\n\nother\n"
        assert len(session.exec(select(OutboxBody)).all()) == 2  # a repeat adds no body
        assert (first.subject, first.kind, first.recipient) == ("first", "gm_alert", "gm@pbem.test")
        assert (first.status, first.attempts, first.lease_owner) == (OutboxStatus.PENDING, 0, None)
        assert first.next_attempt_at == NOW and first.created_at == NOW
        assert first.in_reply_to == "<orders@players.test>"
        assert len(first.raw_sha256) == 64
