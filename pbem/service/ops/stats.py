"""How quickly each player answers: median and worst time from the your-turn mail to
the mail whose orders were played, and turns missed (`pbem show`, the GM's status,
the game site).

Both ends are read with the service's clock: the notice's outbox row (queued at
``ctx.clock.now()``) and the order mail's inbound row (received at the same clock),
so a test's clock and production's agree. Orders entered by the GM have no mail and
are not timed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from statistics import median

from sqlmodel import Session, col, select

from pbem.service.play.games import players_of
from pbem.store import Game, InboundMessage, OrderEntry, Outbox

YOUR_TURN = "your_turn"


@dataclass(frozen=True)
class ResponseStats:
    seat: int
    name: str
    answered: int  # turns answered by mail and timed
    median: timedelta | None
    worst: timedelta | None
    missed: int  # turns played by the default (no orders by the deadline)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def response_stats(session: Session, game: Game) -> list[ResponseStats]:
    out = []
    for player in players_of(session, game):
        notices = [
            _aware(row.created_at)
            for row in session.exec(
                select(Outbox)
                .where(
                    Outbox.game_id == game.id,
                    Outbox.kind == YOUR_TURN,
                    Outbox.recipient == player.address,
                )
                .order_by(col(Outbox.id))
            )
        ]
        entries = session.exec(
            select(OrderEntry).where(
                OrderEntry.game_id == game.id,
                OrderEntry.seat == player.seat,
                OrderEntry.kind == "turn",
                OrderEntry.source == "mail",
            )
        )
        times: list[timedelta] = []
        for entry in entries:
            if entry.message_id is None:
                continue
            inbound = session.exec(
                select(InboundMessage).where(InboundMessage.message_id == entry.message_id)
            ).first()
            if inbound is None:
                continue
            answered = _aware(inbound.received_at)
            started = [n for n in notices if n <= answered]
            if started:
                times.append(answered - started[-1])
        out.append(
            ResponseStats(
                player.seat,
                player.name,
                len(times),
                _median(times),
                max(times) if times else None,
                player.missed_total,
            )
        )
    return out


def _median(times: list[timedelta]) -> timedelta | None:
    if not times:
        return None
    return timedelta(seconds=round(median(t.total_seconds() for t in times)))


def duration(value: timedelta | None) -> str:
    """ "3 h 05 min", "2 d 4 h", or "-" when nothing was timed."""
    if value is None:
        return "-"
    minutes = int(value.total_seconds() // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {mins:02d} min"
    return f"{mins} min"


def stats_lines(stats: list[ResponseStats]) -> list[str]:
    """A small table for `pbem show` and the GM's status."""
    lines = ["Response times (your-turn mail to orders):"]
    width = max([len(s.name) for s in stats] + [6])
    lines.append(f"  {'player':<{width}}  answered  median        worst         missed")
    for s in stats:
        lines.append(
            f"  {s.name:<{width}}  {s.answered:>8}  {duration(s.median):<12}  "
            f"{duration(s.worst):<12}  {s.missed:>6}"
        )
    return lines
