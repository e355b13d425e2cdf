"""Per-address budgets (replies, alerts, press) counted per hour in the database,
so they hold across cron runs and daemons."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, select

from pbem.store import RateCounter


def allow(session: Session, key: str, per_hour: int, now: datetime) -> bool:
    """Count one use of ``key`` in the current hour; False once the budget is spent."""
    window = now.replace(minute=0, second=0, microsecond=0)
    row = session.exec(
        select(RateCounter).where(RateCounter.key == key, RateCounter.window_start == window)
    ).first()
    if row is None:
        row = RateCounter(key=key, window_start=window, count=0)
    if row.count >= per_hour:
        return False
    row.count += 1
    session.add(row)
    session.flush()
    return True
