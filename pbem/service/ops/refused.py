"""`pbem status`: the last day's mail that was refused, and why.

Refused mail is normal (strangers, mistakes, hostile mail) and no problem of
the service, but the GM asked what happened to a mail must find it: every
rejected mail, and every player's mail that was answered but applied nothing
(no password or turn token, an old token, problems in its lines: stored as
processed, pbem.service.intake.refusals). Everything shown comes from a
stranger's mail, so it is shown safe for a terminal: one line, no control
character, bounded.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_
from sqlmodel import Session, col, select

from pbem.mail.bounds import parse_chars
from pbem.mail.identity import from_line, plain_addresses
from pbem.report.letters import quote
from pbem.service.intake import refusals
from pbem.store import InboundMessage
from pbem.store.rawmail import header_block, unpack
from pbem.vocab import InboundStatus

WINDOW = timedelta(hours=24)
MOST = 100  # listed in --json; the text shows the newest few
FROM_CHARS = 200  # of a From line shown when no sender address was read from it
SHOWN_CHARS = 300  # of any other value shown


def refused_rows(session: Session, now: datetime) -> list[InboundMessage]:
    """The last day's refused mail, newest first, at most MOST."""
    since = now - WINDOW
    newest = (col(InboundMessage.processed_at).desc(), col(InboundMessage.id).desc())
    rejected = session.exec(
        select(InboundMessage)
        .where(InboundMessage.status == InboundStatus.REJECTED)
        .where(col(InboundMessage.processed_at) >= since)
        .order_by(*newest)
        .limit(MOST)
    ).all()
    answered = session.exec(
        select(InboundMessage)
        .where(InboundMessage.status == InboundStatus.PROCESSED)
        .where(col(InboundMessage.processed_at) >= since)
        .where(or_(*(col(InboundMessage.outcome).like(p) for p in refusals.LIKE)))
        .order_by(*newest)
        .limit(MOST)
    ).all()
    rows = list(rejected) + [r for r in answered if refusals.applied_nothing(r.outcome)]
    rows.sort(key=lambda r: (r.processed_at, r.id or 0), reverse=True)
    return rows[:MOST]


def listed(row: InboundMessage) -> dict[str, Any]:
    """What `pbem status --json` says of a refused mail beside its common fields."""
    listed: dict[str, Any] = {
        "status": str(row.status),
        "why": _first_line(row.outcome),
        "from_line": None,
        "from_problem": None,
    }
    if not row.sender:  # no address was read: show what the From line held
        value = _stored_from_line(row)
        listed["from_line"] = value
        listed["from_problem"] = _from_problem(value)
    return listed


def _stored_from_line(row: InboundMessage) -> str | None:
    try:
        return from_line(header_block(unpack(row.raw, row.raw_format)))
    except Exception:  # noqa: BLE001 - a stored copy that cannot be read has no From to show
        return None


def _from_problem(value: str | None) -> str:
    if value is None:
        return "no From line"
    found = len(plain_addresses(value))
    if found > 1:  # counted in what was read of the line: a cut line may hold more
        more = " or more" if len(value) >= parse_chars("from") else ""
        return f"{found}{more} addresses in its From line; a mail must come from one"
    return "no address could be read from its From line"


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= 200 else line[:199] + "…"


def lines(refused: list[dict[str, Any]], most: int) -> list[str]:
    """The newest ``most`` refused mails, one line each, safe for a terminal."""
    out = []
    for mail in refused[:most]:
        if mail["sender"]:
            sender = quote(mail["sender"], SHOWN_CHARS)
        elif mail["from_line"] is None:
            sender = f"({mail['from_problem']})"
        else:
            shown = quote(mail["from_line"] or "", FROM_CHARS)
            sender = f'"{shown}" ({mail["from_problem"]})'
        rejected = mail["status"] == InboundStatus.REJECTED
        answered = "" if rejected else " (answered; nothing applied)"
        why = quote(mail["why"], SHOWN_CHARS)
        out.append(f"  {quote(mail['message_id'], SHOWN_CHARS)} from {sender}: {why}{answered}")
    return out
