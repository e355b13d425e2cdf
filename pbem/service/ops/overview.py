"""What `pbem list` and `pbem show` print: the games, and one game, as data
(for --json) and as text. The command line only chooses which to print."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlmodel import Session

from pbem.report.textfmt import when
from pbem.service.ops.describe import describe_game, game_to_json, seat_security
from pbem.service.ops.stats import response_stats, stats_lines
from pbem.service.play.games import find_game, list_games, load, players_of
from pbem.service.play.gamesettings import autopilot_seats, bot_seats, settings
from pbem.service.play.schedule import aware_utc
from pbem.store import Game, Player
from pbem.vocab import SeatStanding, SeatStatus

if TYPE_CHECKING:
    from pbem.rules.state import GameState


def games_table(session: Session) -> tuple[list[dict[str, Any]], str]:
    """Every game: name, phase, status, turn, map, preset; and the table of them."""
    data = [
        {
            "name": g.name,
            "phase": g.phase,
            "status": g.status,
            "turn": g.turn,
            "map": g.map_name,
            "preset": g.preset,
        }
        for g in list_games(session)
    ]
    text = (
        "\n".join(
            f"{d['name']:<20}{d['status']:<10}{d['phase']:<9}"
            f"turn {d['turn']:<5}{d['preset']}/{d['map']}"
            for d in data
        )
        or "no games"
    )
    return data, text


STANDING_TEXT = {
    SeatStanding.AUTOPILOT: "removed: on autopilot, leaving when the setup ends",
    SeatStanding.BOT: "removed: the bot plays",
    SeatStanding.ABSENT: "absent",
    SeatStanding.REMOVED: "removed",
    SeatStanding.RESIGNED: "resigned",
    SeatStanding.ELIMINATED: "out",
}


def standing(row: Game, state: GameState, player: Player, now: datetime) -> SeatStanding:
    """How ``player``'s seat is played now (pbem.vocab.SeatStanding)."""
    from pbem.rules.state import SETUP_PHASES

    seat = player.seat
    if seat in autopilot_seats(row) and state.phase in SETUP_PHASES:
        return SeatStanding.AUTOPILOT
    if seat in bot_seats(row):
        return SeatStanding.BOT
    if player.status == SeatStatus.REMOVED:
        return SeatStanding.REMOVED
    if player.status == SeatStatus.RESIGNED:
        return SeatStanding.RESIGNED
    if player.status == SeatStatus.ELIMINATED or not state.players[seat].alive:
        return SeatStanding.ELIMINATED
    away_from, away_to = aware_utc(player.absent_from), aware_utc(player.absent_to)
    if away_from is not None and away_to is not None and away_from <= now < away_to:
        return SeatStanding.ABSENT
    return SeatStanding.PLAYING


def game_overview(
    session: Session, name: str, now: datetime | None = None
) -> tuple[dict[str, Any], str]:
    """A game's board by continent, players, card counts, whose turn, deadline,
    each seat's standing (``now``: for absences; default the system clock),
    and how fast each player answers."""
    row = find_game(session, name)
    state = load(session, row).state
    now = now or datetime.now(UTC)
    standings = {p.seat: standing(row, state, p, now) for p in players_of(session, row)}
    info: dict[str, Any] = {
        "name": row.name,
        "status": row.status,
        "map": row.map_name,
        "preset": row.preset,
        "commitment": row.commitment,
        "dice": row.dice_version,  # how the commitment's dice are drawn (docs/DICE.md)
        "deadline": row.deadline.isoformat() if row.deadline else None,
    }
    data = game_to_json(state, info)
    for seat, entry in enumerate(data["players"]):
        entry["standing"] = standings.get(seat, SeatStanding.PLAYING).value
    info["marks"] = {
        seat: STANDING_TEXT[mark] for seat, mark in standings.items() if mark in STANDING_TEXT
    }
    if row.deadline is not None:  # readable, in the game's zone and UTC
        info["deadline_text"] = when(row.deadline, str(settings(row)["timezone"]))
    text = describe_game(state, info)
    seats = [
        (p.seat, p.name, p.wrong_passwords, p.last_wrong_password_at)
        for p in players_of(session, row)
    ]
    text = text.rstrip("\n") + "\n\n" + "\n".join(seat_security(seats, data))
    answers = response_stats(session, row)
    data["response_times"] = [
        {
            "player": s.name,
            "answered": s.answered,
            "median_seconds": s.median.total_seconds() if s.median else None,
            "worst_seconds": s.worst.total_seconds() if s.worst else None,
            "missed": s.missed,
        }
        for s in answers
    ]
    if answers:
        text = text.rstrip("\n") + "\n\n" + "\n".join(stats_lines(answers))
    return data, text
