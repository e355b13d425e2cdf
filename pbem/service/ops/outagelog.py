"""The outages that are over: the last few, kept in the database for `pbem status`.

An outage going on is kept where every worker sees it (pbem.service.ops.health:
a service_state row for the inbox and SMTP, a file for the database). Once it
is over, the worker that ends it writes it here, in one service_state row
(``outage_history``, a JSON list, newest first, at most ``KEEP``) read and
written under the row's lock (PostgreSQL: SELECT ... FOR UPDATE; SQLite: the
write transaction holds the only write lock), so three workers on one
PostgreSQL never lose each other's record.

Workers on other hosts without a shared ``[poll] outage_dir`` each keep the
database's outage in a file of their own, and each ends it when the database
answers again: the first one's record stands, and the others' fold into it
(their times overlap), so the history holds the outage once and the GM gets
one note that it is over.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, select

from pbem.store import ServiceState, is_postgresql
from pbem.vocab import Component

HISTORY_KEY = "outage_history"
KEEP = 20  # outages kept, the newest


def _at(when: str) -> datetime:
    return datetime.fromisoformat(when)


@dataclass
class PastOutage:
    component: Component
    since: str  # ISO times: the first failure, and when it worked again
    until: str
    error: str  # the last error seen
    alerted: bool  # the GM was told (and so, once, that it is over)

    @property
    def minutes(self) -> float:
        span = _at(self.until) - _at(self.since)
        return round(span.total_seconds() / 60, 1)

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "component": self.component.value, "minutes": self.minutes}

    def overlaps(self, other: PastOutage) -> bool:
        return (
            self.component is other.component
            and _at(self.since) <= _at(other.until)
            and _at(other.since) <= _at(self.until)
        )

    def line(self) -> str:
        told = "the GM was told" if self.alerted else "shorter than the alert threshold"
        return (
            f"{self.component.value} out from {self.since} to {self.until} "
            f"({self.minutes:.0f} minutes, {told}): {self.error}"
        )

    @classmethod
    def from_json(cls, i: dict[str, Any]) -> PastOutage:
        return cls(Component(i["component"]), i["since"], i["until"], i["error"], i["alerted"])


def _parse(value: str) -> list[PastOutage]:
    try:
        return [PastOutage.from_json(i) for i in json.loads(value or "[]")]
    except (ValueError, KeyError, TypeError):
        return []  # an unreadable history is started afresh, never fatal to a poll


def past_outages(session: Session) -> list[PastOutage]:
    """The outages that are over, newest first."""
    row = session.exec(select(ServiceState).where(ServiceState.key == HISTORY_KEY)).first()
    return _parse(row.value) if row else []


def remember(session: Session, outage: PastOutage) -> PastOutage | None:
    """Keep an outage that is over. When another worker kept the same outage
    already (their times overlap: a host without the shared outage file),
    the two fold into one and that earlier record is returned (it says
    whether the GM was told); None when this one is new."""
    statement = select(ServiceState).where(ServiceState.key == HISTORY_KEY)
    if is_postgresql(session):
        statement = statement.with_for_update()
    row = session.exec(statement).first() or ServiceState(key=HISTORY_KEY, value="[]")
    kept = _parse(row.value)
    earlier = next((past for past in kept if past.overlaps(outage)), None)
    if earlier is not None:
        before = PastOutage(**asdict(earlier))
        earlier.since = min(earlier.since, outage.since, key=_at)
        earlier.until = max(earlier.until, outage.until, key=_at)
        earlier.alerted = earlier.alerted or outage.alerted
    else:
        kept.insert(0, outage)
    kept.sort(key=lambda past: _at(past.until), reverse=True)
    row.value = json.dumps([past.as_json() for past in kept[:KEEP]])
    session.add(row)
    session.flush()
    return before if earlier is not None else None
