"""What `pbem list` and `pbem show` print: the games, and one game, as data
(for --json) and as text. The command line only chooses which to print."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlmodel import Session, select

from pbem.report.textfmt import when
from pbem.rules.state import ENDED, SETUP_PHASES, GameState
from pbem.service.ops.describe import describe_game, game_to_json, open_settings, seat_security
from pbem.service.ops.stats import response_stats, stats_lines
from pbem.service.play.games import find_game, list_games, load, players_of
from pbem.service.play.gamesettings import autopilot_seats, bot_seats, settings
from pbem.service.play.loading import stored_options
from pbem.service.play.schedule import aware_utc
from pbem.store import Game, PendingOrders, Player, SeatHolder
from pbem.vocab import GamePhase, SeatStanding, SeatStatus


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
    if seat < len(state.players) and state.players[seat].neutral:
        return SeatStanding.NEUTRAL
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


def _holders(session: Session, row: Game) -> dict[int, tuple[str, str, int]]:
    """Seat -> (who holds it, their address, from which turn): a seat given
    to another by `pbem replace` keeps its name in the game, not its holder."""
    held = session.exec(
        select(SeatHolder).where(
            SeatHolder.game_id == row.id,
            SeatHolder.to_turn.is_(None),  # type: ignore[union-attr]
        )
    ).all()
    found = {h.seat: (h.name, h.address, h.from_turn) for h in held}
    for p in players_of(session, row):  # the address the game writes to, as it is now
        name, _, since = found.get(p.seat, (p.name, "", 0))
        found[p.seat] = (name, p.address, since)
    return found


def _holder_lines(state: GameState, seated: dict[int, tuple[str, str, int]]) -> list[str]:
    """Who holds each seat, and their address (the GM's view)."""
    lines = ["Seat holders (the GM's view)"]
    for seat, p in enumerate(state.players):
        if seat not in seated or p.neutral:
            continue
        name, address, since = seated[seat]
        held = f"{name} <{address}>"
        if name != p.name:  # given to another by `pbem replace`
            held += f", since turn {since}"
        lines.append(f"  {p.name}: {held}")
    return lines


def _setup_orders(session: Session, row: Game, state: GameState) -> tuple[list[str], list[str]]:
    """Who has sent their setup orders, and who is awaited (as
    pbem.service.play.turns.must_act tells them, without its imports: `pbem
    show` loads no mail machinery)."""
    players = players_of(session, row)
    pending = select(PendingOrders.seat).where(
        PendingOrders.game_id == row.id, PendingOrders.turn == 0
    )
    sent = set(session.exec(pending).all())
    seats = [s for s in state.order if s < len(players)]
    return (
        [players[s].name for s in seats if s in sent],
        [players[s].name for s in seats if s not in sent],
    )


def rules_version_line(name: str, version: int, started: int, finished: bool) -> str:
    """What `pbem show` says of a game's rules version (issue 31): the newest
    or older, the version it started with when the GM moved it, and (for a
    game still played) how to move it."""
    from pbem.rules.ruleversions import RULES_VERSION

    moved = f", moved from version {started} by the GM" if started != version else ""
    if version >= RULES_VERSION:
        return f"Rules version {version}{moved} (the newest this pbem knows)."
    if finished:
        return f"Rules version {version}{moved or ', as the game was played'}."
    kept = moved or ", kept from its start"
    return (
        f"Rules version {version}{kept}; this pbem's newest is "
        f"{RULES_VERSION}: `pbem upgrade-rules {name}` shows what would change and moves it."
    )


def _open_overview(session: Session, row: Game) -> tuple[dict[str, Any], str]:
    """A game open for JOIN: the seats taken so far and its online settings (its
    teams, by seat or as the GM named them)."""
    from pbem.service.intake.joining import seats

    joined = [p.name for p in players_of(session, row)]
    said = open_settings(row)
    data: dict[str, Any] = {
        "name": row.name, "status": row.status, "phase": str(row.phase), "map": row.map_name,
        "preset": row.preset, "seats": seats(row), "joined": joined, "online_settings": said,
    }  # fmt: skip
    head = (
        f"Game {row.name} on {row.map_name} (preset {row.preset}): open for players to "
        f"JOIN, {len(joined)} of {seats(row)} seats taken"
    )
    lines = [head + (f": {', '.join(joined)}" if joined else "")]
    return data, "\n".join(lines + [f"Online settings: {s}" for s in said])


def game_overview(
    session: Session, name: str, now: datetime | None = None
) -> tuple[dict[str, Any], str]:
    """A game's board by continent, players, card counts, whose turn, deadline,
    each seat's standing (``now``: for absences; default the system clock),
    and how fast each player answers."""
    row = find_game(session, name)
    if row.phase == GamePhase.OPEN:  # no board yet: who joined, and the settings
        return _open_overview(session, row)
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
    data["rules_version"] = state.options.rules_version  # after any `pbem upgrade-rules`
    started = stored_options(row).rules_version
    data["rules_version_at_start"] = started
    seated = _holders(session, row)
    for seat, entry in enumerate(data["players"]):
        mark = standings.get(seat, SeatStanding.PLAYING)
        if state.players[seat].neutral:
            mark = SeatStanding.NEUTRAL
        # removed in the setup, placed for until it ends: removed, and leaving
        entry["standing"] = (SeatStanding.REMOVED if mark == SeatStanding.AUTOPILOT else mark).value
        entry["leaving_after_setup"] = mark == SeatStanding.AUTOPILOT
        if seat in seated:
            entry["holder"], entry["address"], entry["holder_since_turn"] = seated[seat]
    if state.phase in SETUP_PHASES and row.phase != GamePhase.OPEN:
        info["setup_sent"], info["setup_awaited"] = _setup_orders(session, row, state)
        data["setup_sent"], data["setup_awaited"] = info["setup_sent"], info["setup_awaited"]
    info["marks"] = {
        seat: STANDING_TEXT[mark] for seat, mark in standings.items() if mark in STANDING_TEXT
    }
    if row.deadline is not None:  # readable, in the game's zone and UTC
        info["deadline_text"] = when(row.deadline, str(settings(row)["timezone"]))
    text = describe_game(state, info)
    head, _, rest = text.partition("\n\n")  # the line under the game's heading lines
    version = rules_version_line(
        row.name, state.options.rules_version, started, state.phase == ENDED
    )
    text = f"{head}\n{version}\n\n{rest}"
    text = text.rstrip("\n") + "\n\n" + "\n".join(_holder_lines(state, seated))
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
