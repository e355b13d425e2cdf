"""Whether any notice waits to be told: the one question a command asks the
store after its commit before importing the report layer to tell it."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.store.db import session_scope
from pbem.store.models import Notice


def notices_pending(engine: Engine) -> bool:
    """Some notice is decided and not told yet (pbem/service/tell/telling.py)."""
    with session_scope(engine, write=False) as session:
        return (
            session.exec(select(Notice.id).where(col(Notice.told_at).is_(None))).first() is not None
        )


def prune_told(engine: Engine, cut: datetime) -> None:
    """Notices told before ``cut`` are of no more use (the outbox keeps the mails)."""
    with session_scope(engine, durable=False) as session:
        session.execute(delete(Notice).where(col(Notice.told_at) < cut))


def untold_since(session: Session, cut: datetime) -> int:
    """Notices decided before ``cut`` and still not told: mails a telling stage
    tried and could not render (its log says why), shown by `pbem status`."""
    rows = session.exec(
        select(Notice.id).where(col(Notice.told_at).is_(None), col(Notice.created_at) < cut)
    )
    return len(rows.all())
