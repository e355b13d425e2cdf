"""`pbem status`: is the service healthy, and if not, what waits for the GM.

The answer suits a person (text) and a monitoring check (JSON and the exit
code, as Nagios-style checks read it: 0 healthy, 1 warning, 2 critical).
Critical: an outage past the alert threshold, or a database that cannot
be read. Warning: mail held or failing, mail refused for good, an outage
not yet past the threshold. A mail is failing while it is claimed and not
done with an attempt spent (its claim counts one before any work) and is
not simply being processed now: an error recorded, more than one attempt,
or no live lease (the poll that took it died).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import timedelta
from enum import IntEnum
from typing import Any

from sqlalchemy import or_
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from pbem.config import Config
from pbem.service.clock import Clock
from pbem.service.intake import seatguard
from pbem.service.ops.health import Outage, database_outage, outages
from pbem.service.ops.outagelog import KEEP, PastOutage, past_outages
from pbem.service.ops.refused import lines as refused_lines
from pbem.service.ops.refused import listed, refused_rows
from pbem.service.tell import outbox
from pbem.store import InboundMessage, ServiceState, session_scope
from pbem.store.errors import DatabaseError
from pbem.store.pending import untold_since
from pbem.vocab import Component, InboundStatus

# A notice is told right after its decision's commit; one still untold after
# this long failed to render (a poll in progress is not a problem).
UNTOLD_GRACE = timedelta(minutes=10)
SHOWN_PAST = 3  # past outages in the text; --json has every one kept
# the last day's refused mail is listed (pbem.service.ops.refused)
SHOWN_REFUSED = 5  # the newest refused mails in the text; --json has the day's (at most 100)


class Level(IntEnum):
    OK = 0
    WARNING = 1
    CRITICAL = 2


@dataclass
class Status:
    level: Level = Level.OK
    held: list[dict[str, Any]] = field(default_factory=list)
    failing: list[dict[str, Any]] = field(default_factory=list)
    outbox: dict[str, Any] = field(default_factory=dict)
    outages: dict[str, dict[str, Any]] = field(default_factory=dict)
    past_outages: list[dict[str, Any]] = field(default_factory=list)  # newest first
    last_poll: str | None = None
    problems: list[str] = field(default_factory=list)  # one line each, worst first
    wrong_passwords: list[dict[str, Any]] = field(default_factory=list)  # seatguard.py
    refused: list[dict[str, Any]] = field(default_factory=list)  # the last day's, newest first

    @property
    def ok(self) -> bool:
        return self.level is Level.OK

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["level"] = self.level.name.lower()
        data["ok"] = self.ok
        return data

    def raise_to(self, level: Level, problem: str) -> None:
        self.level = max(self.level, level)
        self.problems.append(problem)


def _mail(row: InboundMessage) -> dict[str, Any]:
    return {
        "id": row.id,
        "message_id": row.message_id,
        "sender": row.sender,
        "subject": row.subject,
        "attempts": row.attempts,
        "last_error": row.last_error,
        "next_attempt_at": row.next_attempt_at.isoformat() if row.next_attempt_at else None,
    }


def read_status(engine: Engine, config: Config, clock: Clock) -> Status:
    now = clock.now()
    status = Status()
    try:
        with session_scope(engine, write=False) as session:
            held = session.exec(
                select(InboundMessage).where(InboundMessage.status == InboundStatus.HELD)
            ).all()
            failing = session.exec(
                select(InboundMessage).where(
                    InboundMessage.status == InboundStatus.CLAIMED,
                    col(InboundMessage.attempts) > 0,
                    or_(
                        col(InboundMessage.last_error).is_not(None),
                        col(InboundMessage.attempts) > 1,
                        col(InboundMessage.lease_until).is_(None),
                        col(InboundMessage.lease_until) <= now,
                    ),
                )
            ).all()
            refused = refused_rows(session, now)
            status.refused = [{**_mail(r), **listed(r)} for r in refused]
            status.held = [_mail(r) for r in held]
            status.failing = [_mail(r) for r in failing]
            counts = outbox.counts(session, now)
            status.outbox = {
                "pending": counts.pending,
                "sending": counts.sending,
                "failed": counts.failed,
                "oldest_pending": counts.oldest_pending.isoformat()
                if counts.oldest_pending
                else None,
            }
            stuck = untold_since(session, now - UNTOLD_GRACE)
            found = outages(session, config)
            status.past_outages = [past.as_json() for past in past_outages(session)]
            row = session.exec(select(ServiceState).where(ServiceState.key == "last_poll")).first()
            status.last_poll = row.value if row else None
            status.wrong_passwords = seatguard.wrong_password_report(session)
    except DatabaseError as exc:
        outage = database_outage(config)
        status.outages[Component.DATABASE.value] = {
            "since": outage.since if outage else now.isoformat(),
            "alerted": outage.alerted if outage else False,
            "error": str(exc),
        }
        status.raise_to(Level.CRITICAL, f"the database cannot be read: {exc}")
        return status
    threshold = config.poll.outage_alert_minutes
    for name, outage in sorted(found.items()):
        status.outages[name] = {**asdict(outage), "minutes": round(outage.minutes(now), 1)}
        level = Level.CRITICAL if outage.minutes(now) >= threshold else Level.WARNING
        status.raise_to(level, _outage_line(name, outage, now))
    if status.held:
        status.raise_to(Level.WARNING, f"{len(status.held)} mail held after failing (see below)")
    if status.failing:
        status.raise_to(Level.WARNING, f"{len(status.failing)} mail failing, to be tried again")
    if counts.failed:
        status.raise_to(Level.WARNING, f"{counts.failed} outgoing mail refused for good")
    if stuck:
        status.raise_to(
            Level.WARNING,
            f"{stuck} decided mail could not be rendered yet (kept; the poll's log says why)",
        )
    status.problems.sort(key=lambda line: not line.startswith("outage"))
    return status


def _outage_line(name: str, outage: Outage, now: Any) -> str:
    told = "the GM was told" if outage.alerted else "not yet told"
    return (
        f"outage of {name} for {outage.minutes(now):.0f} minutes since {outage.since} "
        f"({told}): {outage.error}"
    )


def describe(status: Status) -> str:
    """The status as a few lines for a person."""
    lines = [f"status: {status.level.name.lower()}"]
    lines += [f"  {line}" for line in status.problems]
    lines.append(f"last poll: {status.last_poll or 'never'}")
    if status.outbox:
        lines.append(
            "outbox: {pending} waiting, {sending} being sent, {failed} refused".format(
                **status.outbox
            )
        )
    lines += seatguard.wrong_password_lines(status.wrong_passwords)
    if status.past_outages:
        lines.append(f"past outages (the last {KEEP} are kept; --json lists them):")
        for past in status.past_outages[:SHOWN_PAST]:
            lines.append("  " + PastOutage.from_json(past).line())
    if status.refused:
        more = len(status.refused) - SHOWN_REFUSED
        lines.append(
            f"refused in the last 24 hours: {len(status.refused)}"
            + (f" (the newest {SHOWN_REFUSED}; --json lists up to 100)" if more > 0 else "")
        )
        lines += refused_lines(status.refused, SHOWN_REFUSED)
    for title, mails in (("held", status.held), ("failing", status.failing)):
        for mail in mails:
            lines.append(
                f"{title}: {mail['message_id']} from {mail['sender']} "
                f"({mail['attempts']} attempts): {mail['last_error']}"
            )
    return "\n".join(lines)
