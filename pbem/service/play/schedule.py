"""When a player must act: deadlines, allowed days, extra hours, absences.

Time comes only from the clock in the context; a deadline is set when a
period starts (``start_period``) and moved by absences and allowed days.
Nothing here sends mail (pbem.service.play.notify does) or plays a turn
(pbem.service.play.deadlines does).
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any, overload
from zoneinfo import ZoneInfo

from sqlmodel import Session, select

from pbem.service.context import Context
from pbem.service.play import rounds
from pbem.service.play.gamesettings import DAYS, UTC, settings
from pbem.store import Game, Player, ServiceState
from pbem.vocab import GameStatus

if TYPE_CHECKING:
    from pbem.rules.state import GameState


@overload
def aware_utc(moment: datetime) -> datetime: ...
@overload
def aware_utc(moment: None) -> None: ...
def aware_utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def on_allowed_day(moment: datetime, conf: dict[str, Any]) -> datetime:
    """Move a deadline forward, a day at a time, to a day the game allows
    (days are those of the game's time zone)."""
    allowed = {d.lower()[:3] for d in conf["allowed_days"]} or set(DAYS)
    zone = ZoneInfo(conf["timezone"])
    for _ in range(7):
        if DAYS[moment.astimezone(zone).weekday()] in allowed:
            return moment
        moment += timedelta(days=1)
    return moment


def period_key(game: Game) -> str:
    """One deadline of one turn (or setup phase) of one game: what markers count."""
    deadline = aware_utc(game.deadline)
    stamp = deadline.isoformat() if deadline else "-"
    return f"{game.id}:{rounds.round_from(game)}:{game.phase}:{stamp}"  # freestyle: a round


def state_row(session: Session, key: str) -> ServiceState | None:
    return session.exec(select(ServiceState).where(ServiceState.key == key)).first()


# --------------------------------------------------------------- periods
def start_period(session: Session, ctx: Context, game: Game, state: GameState) -> None:
    """Set the deadline for whoever must act now (setup: everyone)."""
    from pbem.rules.state import ENDED, SETUP_PHASES
    from pbem.service.play.games import players_of

    if state.phase == ENDED or game.status == GameStatus.FINISHED:
        game.deadline = None
        session.add(game)
        return
    conf = settings(game)
    now = ctx.clock.now()
    if state.phase in SETUP_PHASES:
        deadline = now + timedelta(hours=conf["setup_hours"])
    else:
        deadline = now + timedelta(hours=conf["turn_hours"])
        deadline += _take_extra_hours(session, game, state.current)
        players = players_of(session, game)
        if 0 <= state.current < len(players):
            deadline = absence_end(session, game, players[state.current], deadline)
        # freestyle: one deadline for the round (an absence or extra hours of one
        # player would hold up all the others: missed turns follow the policy)
    game.deadline = on_allowed_day(deadline, conf)
    session.add(game)


def _extra_key(game: Game, seat: int) -> str:
    return f"extra-hours:{game.id}:{seat}"


def grant_extra_hours(session: Session, game: Game, seat: int, hours: float) -> None:
    """The seat's next deadline comes ``hours`` later (a newcomer's first turn)."""
    row = state_row(session, _extra_key(game, seat)) or ServiceState(key=_extra_key(game, seat))
    row.value = str(hours)
    session.add(row)
    session.flush()


def _take_extra_hours(session: Session, game: Game, seat: int) -> timedelta:
    row = state_row(session, _extra_key(game, seat))
    if row is None:
        return timedelta(0)
    session.delete(row)
    session.flush()
    return timedelta(hours=float(row.value))


# ---------------------------------------------------------------- absences
def _absence_key(game: Game, seat: int) -> str:
    return f"absent:{game.id}:{seat}"


def absences(session: Session, game: Game, seat: int) -> list[tuple[date, date]]:
    """The seat holder's announced absences (first and last day, in the game's zone)."""
    row = state_row(session, _absence_key(game, seat))
    pairs = json.loads(row.value) if row else []
    return [(date.fromisoformat(a), date.fromisoformat(b)) for a, b in pairs]


def clear_absences(session: Session, game: Game, player: Player) -> None:
    row = state_row(session, _absence_key(game, player.seat))
    if row is not None:
        session.delete(row)
    player.absent_from = player.absent_to = None
    player.absence_days_used = 0
    session.add(player)


def absence_end(session: Session, game: Game, player: Player, deadline: datetime) -> datetime:
    """A deadline that falls inside one of the player's absences moves to its
    end (midnight after its last day, in the game's zone)."""
    zone = ZoneInfo(settings(game)["timezone"])
    moved = True
    while moved:
        moved = False
        for start, end in absences(session, game, player.seat):
            begins = datetime.combine(start, time.min, zone)
            ends = datetime.combine(end + timedelta(days=1), time.min, zone)
            if begins <= deadline < ends:
                deadline, moved = ends.astimezone(UTC), True
    return deadline


def absent_at(session: Session, game: Game, player: Player, moment: datetime) -> bool:
    """Whether ``moment`` falls in one of the player's absences (freestyle: the
    round's deadline does not wait for one player, but a missed turn then is
    not counted against them)."""
    return absence_end(session, game, player, moment) != moment


MAX_DAYS_AHEAD = 366  # an absence starts and ends within a year of today


def absence_problem(
    session: Session, ctx: Context, game: Game, player: Player, start: date, end: date
) -> str | None:
    """Why ABSENT FROM start TO end cannot be noted (the sentence for the
    player, ending "nothing changed"), or None. Bounded work whatever the
    dates: far dates are refused before any day is counted."""
    conf = settings(game)
    zone = ZoneInfo(conf["timezone"])
    today = ctx.clock.now().astimezone(zone).date()
    if end < start:
        return f"ABSENT: {end} is before {start}; nothing changed."
    if end < today:
        return f"ABSENT: that absence ended before today ({today}); nothing changed."
    if (end - today).days > MAX_DAYS_AHEAD:
        return (
            f"ABSENT: {end} is more than {MAX_DAYS_AHEAD} days ahead; announce an absence "
            "within the coming year. Nothing changed."
        )
    start = max(start, today)
    taken = absences(session, game, player.seat)
    covered = _days(taken)
    new = _days([(start, end)]) - covered
    allowed = int(conf["absence_days_per_year"])
    for year in sorted({d.year for d in new}):
        used = sum(1 for d in covered if d.year == year)
        wanted = sum(1 for d in new if d.year == year)
        if used + wanted > allowed:
            return (
                f"ABSENT: {wanted} more days in {year} asked, but only {max(0, allowed - used)} "
                f"of the {allowed} days a year this game allows are left; nothing changed."
            )
    return None


def _days(spans: list[tuple[date, date]]) -> set[date]:
    return {a + timedelta(days=i) for a, b in spans for i in range((b - a).days + 1)}


def absence(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    start: date,
    end: date,
    state: GameState | None = None,
) -> tuple[str, bool]:
    """ABSENT FROM start TO end: this player's deadlines inside it move to its
    end, within the game's allowance of days per calendar year. Returns the
    answer for the player (``absence_problem``'s, when it cannot be noted)
    and whether anything changed: not for an absence already noted, day for
    day. ``state``: the game now, as the caller loaded it (else loaded here)."""
    from pbem.rules.state import SETUP_PHASES
    from pbem.service.play.games import load

    problem = absence_problem(session, ctx, game, player, start, end)
    if problem is not None:
        return problem, False
    conf = settings(game)
    zone = ZoneInfo(conf["timezone"])
    today = ctx.clock.now().astimezone(zone).date()
    start = max(start, today)
    taken = absences(session, game, player.seat)
    covered = _days(taken)
    new = _days([(start, end)]) - covered
    if not new:
        noted = ", ".join(f"{a} to {b}" for a, b in taken if a <= end and start <= b)
        return (
            f"You were already marked absent from {start} to {end} in {game.name} "
            f"(noted: {noted}); nothing changed.",
            False,
        )
    allowed = int(conf["absence_days_per_year"])
    row = state_row(session, _absence_key(game, player.seat))
    row = row or ServiceState(key=_absence_key(game, player.seat))
    row.value = json.dumps([[a.isoformat(), b.isoformat()] for a, b in [*taken, (start, end)]])
    session.add(row)
    player.absent_from = datetime.combine(start, time.min, zone).astimezone(UTC)
    player.absent_to = datetime.combine(end + timedelta(days=1), time.min, zone).astimezone(UTC)
    player.absence_days_used += len(new)
    session.add(player)
    session.flush()
    moved = ""
    if state is None:
        state = load(session, game).state
    if state.phase not in SETUP_PHASES and state.current == player.seat and game.deadline:
        before = aware_utc(game.deadline)
        assert before is not None
        game.deadline = on_allowed_day(absence_end(session, game, player, before), conf)
        session.add(game)
        if game.deadline != before:
            local = game.deadline.astimezone(zone)
            moved = f" Your current deadline moved to {local:%Y-%m-%d %H:%M} ({zone.key})."
    left = allowed - sum(1 for d in covered | new if d.year == end.year)
    return (
        f"Absence noted from {start} to {end}: your deadlines falling inside it move "
        f"to its end.{moved} ({left} days of absence left in {end.year}.)"
    ), True
