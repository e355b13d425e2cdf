"""A deadline as an iCalendar file (RFC 5545): attached to the your-turn mail and
published on the game site, so a player's calendar says when orders are due.

Pure text: the caller passes every time (the deadline and the stamp, UTC) and the
host that makes the UID unique; the same deadline always gives the same UID, so a
moved deadline (``pbem extend``) updates the calendar entry instead of adding one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

PRODID = "-//pbem//Risk by mail//EN"
WINDOW = timedelta(minutes=30)  # the entry ends at the deadline and lasts this long
ALARM = timedelta(hours=2)  # the calendar reminds this long before


@dataclass(frozen=True)
class Deadline:
    game: str  # the game's short name
    turn: int  # 0 for setup orders
    who: str  # whose orders are due (a player's name, or "every player")
    at: datetime  # the deadline, UTC
    seat: int | None = None  # None: one entry for everybody (setup, the site)


def _utc(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _fold(line: str) -> list[str]:
    """Lines of at most 75 octets; continuation lines start with a space (RFC 5545 3.1)."""
    out: list[str] = []
    data = line.encode("utf-8")
    limit = 75
    while len(data) > limit:
        cut = limit
        while cut and (data[cut] & 0xC0) == 0x80:  # never split a UTF-8 sequence
            cut -= 1
        out.append(data[:cut].decode("utf-8"))
        data = data[cut:]
        limit = 74  # the leading space counts
    out.append(data.decode("utf-8"))
    return [out[0]] + [" " + part for part in out[1:]]


def uid(deadline: Deadline, host: str) -> str:
    seat = "all" if deadline.seat is None else f"seat{deadline.seat}"
    return f"pbem-{deadline.game}-turn{deadline.turn}-{seat}@{host}"


def calendar(deadlines: list[Deadline], host: str, stamp: datetime) -> str:
    """One VCALENDAR holding an event per deadline, CRLF line ends."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:{PRODID}", "METHOD:PUBLISH"]
    for d in deadlines:
        what = f"turn {d.turn}" if d.turn else "setup"
        summary = f"[{d.game}] orders due for {what} ({d.who})"
        lines += [
            "BEGIN:VEVENT",
            f"UID:{uid(d, host)}",
            f"DTSTAMP:{_utc(stamp)}",
            f"DTSTART:{_utc(d.at - WINDOW)}",
            f"DTEND:{_utc(d.at)}",
            f"SUMMARY:{_escape(summary)}",
            "DESCRIPTION:"
            + _escape(f"The deadline for {d.who}'s orders in game {d.game}, {what}."),
            "TRANSP:TRANSPARENT",
            "BEGIN:VALARM",
            "ACTION:DISPLAY",
            f"DESCRIPTION:{_escape(summary)}",
            f"TRIGGER:-PT{int(ALARM.total_seconds() // 60)}M",
            "END:VALARM",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    return "".join(part + "\r\n" for line in lines for part in _fold(line))
