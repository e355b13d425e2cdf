"""Rows read once per transaction: a mail asks for a game's players
and its dice rerolls about ten times while it is answered.

A list kept here lives in the session's ``info`` until the transaction
commits or rolls back. Rows changed meanwhile are the same ORM objects, so
a kept list still shows them; a writer that adds rows (a seat, a reroll)
calls ``drop`` so the next read sees them.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

_KEY = "pbem_per_transaction"


def kept(session: Session, kind: str) -> dict[Any, Any]:
    """The lists of one kind kept in this transaction (by game), to read and fill."""
    shelves: dict[str, dict[Any, Any]] = session.info.setdefault(_KEY, {})
    return shelves.setdefault(kind, {})


def drop(session: Session, kind: str) -> None:
    """Forget what was kept of this kind (rows were added)."""
    session.info.get(_KEY, {}).pop(kind, None)


@event.listens_for(Session, "after_commit")
@event.listens_for(Session, "after_rollback")
def _forget(session: Session) -> None:
    session.info.pop(_KEY, None)
