"""Column types that behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


def utcnow() -> datetime:
    """The current time as an aware UTC datetime (the only kind the store accepts)."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """An aware datetime, stored in UTC, always read back as aware UTC.

    PostgreSQL keeps the zone itself (timestamptz); SQLite keeps a plain
    string, so the value is written as naive UTC and the zone is put back on
    read. A naive datetime is refused: it would silently mean local time on
    one machine and UTC on another.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime, got {type(value).__name__}: {value!r}")
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"naive datetime {value.isoformat()} refused: give a timezone (use utcnow())"
            )
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
