"""The one source of time for the service layer (the rules engine never sees one).

Tests hand the service a ManualClock and move it; everything else uses
SystemClock. Times are aware UTC datetimes.

``now`` is the game's time; ``real`` is the time that really passes, the
one an outage is measured on. They differ only for a ShiftedClock (``pbem
--now``, $PBEM_NOW): a GM's jump of the game's time is no outage.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...

    def real(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def real(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that stands still until told to move."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("ManualClock needs an aware datetime (UTC)")
        self._now = start

    def now(self) -> datetime:
        return self._now

    def real(self) -> datetime:
        """A test's clock is its real time too: moving it is time passing."""
        return self._now

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now

    def set(self, when: datetime) -> None:
        self._now = when


ENV_NOW = "PBEM_NOW"


class ShiftedClock:
    """The system clock on another time base: it reads ``start`` when made and
    runs on from there, so a GM can try deadlines without waiting for them."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("ShiftedClock needs an aware datetime (UTC)")
        self._offset = start - datetime.now(UTC)

    def now(self) -> datetime:
        return datetime.now(UTC) + self._offset

    def real(self) -> datetime:
        """The system clock, unshifted: what the GM's jump did not move."""
        return datetime.now(UTC)


class ClockError(ValueError):
    """A time given for the clock that cannot be read."""


def clock_from(now: str | None) -> Clock:
    """The clock of a command: ``now`` (or $PBEM_NOW), an ISO 8601 time such as
    2026-12-01T09:00Z (UTC when it names no zone), else the system clock."""
    import os

    text = now or os.environ.get(ENV_NOW, "")
    if not text:
        return SystemClock()
    try:
        start = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ClockError(
            f"{ENV_NOW if not now else '--now'}: {text!r} is not a time; write it as "
            "2026-12-01T09:00Z (ISO 8601, UTC unless a zone is given)"
        ) from None
    return ShiftedClock(start if start.tzinfo else start.replace(tzinfo=UTC))
