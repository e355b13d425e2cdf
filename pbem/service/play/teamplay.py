"""Team games in the service: who a PRESS TO TEAM reaches, and the GM's teams
of a game open for JOIN (the teams are the rules' own, rules/teams.py: seats
in blocks of ``team_size``; the players who join are seated team after team
when the game fills)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel import Session, select

from pbem import orders
from pbem.rules.errors import OptionsError
from pbem.rules.options import Options
from pbem.rules.teamrules import seats_in_teams, team_name
from pbem.service.errors import ServiceError
from pbem.service.play import pertx
from pbem.service.play.gamesettings import settings_of
from pbem.service.play.loading import players_of, stored_options
from pbem.service.play.names import check_player_name
from pbem.store import Game, Player, SeatHolder, id_of


def team_targets(options: Options, seat: int, players: Sequence[Player]) -> list[Player]:
    """The sender's teammates among ``players`` (those still in the game, the
    sender left out): a PRESS TO TEAM reaches them and nobody else."""
    size = options.team_size
    if not size:
        raise ServiceError("PRESS TO TEAM: this game is not played in teams")
    team = [p for p in players if p.seat // size == seat // size and p.seat != seat]
    if not team:
        raise ServiceError(
            f"PRESS TO TEAM: nobody else of your {team_name(seat // size)} is in the game"
        )
    return team


def press_targets(
    game: Game, seat: int, press: orders.Press, players: Sequence[Player]
) -> list[Player]:
    """Who a press block reaches among ``players`` (the others still in the game):
    all of them (TO ALL), the teammates (TO TEAM), or the player named."""
    if press.to_all:
        return list(players)
    if press.to_team:
        return team_targets(stored_options(game), seat, players)
    return [p for p in players if p.name.lower() == press.recipient.lower()]


# ------------------------------------------------- a team game open for JOIN
OPEN_TEAMS = "teams"  # the settings' key of the GM's teams in a game open for JOIN


def open_teams(text: str, team_size: int, seats: int) -> str:
    """The GM's teams of a game open for JOIN (``pbem new --open --teams``), checked
    and written plainly ("alice,carol / bob,dave"): the names the players must
    JOIN as, every team of ``team_size``, ``seats`` names in all."""
    teams = [[n.strip() for n in part.split(",") if n.strip()] for part in text.split("/")]
    names = [check_player_name(n) for team in teams for n in team]
    try:
        seats_in_teams(names, text, team_size)  # the team sizes, a name twice
    except OptionsError as exc:
        raise ServiceError(str(exc)) from None
    twice = [n for n in names if [m.lower() for m in names].count(n.lower()) > 1]
    if twice:
        raise ServiceError(f"--teams: {twice[0]} is on two teams")
    if len(names) != seats:
        raise ServiceError(f"--teams names {len(names)} players; the game is open for {seats}")
    return " / ".join(",".join(team) for team in teams)


def reserved_names(game: Game) -> list[str]:
    """The names the GM's teams reserve, team after team (empty without them)."""
    text = str(settings_of(game).get(OPEN_TEAMS, ""))
    return [n.strip() for part in text.split("/") for n in part.split(",") if n.strip()]


def reserved_spelling(game: Game, name: str) -> str:
    """A name the GM's teams reserve, as the GM wrote it (a JOIN may differ in case)."""
    return next((n for n in reserved_names(game) if n.lower() == name.lower()), name)


def join_problem(game: Game, name: str) -> str | None:
    """Why ``name`` may not JOIN: the GM's teams name the players, and not them."""
    names = reserved_names(game)
    if not names or name.lower() in (n.lower() for n in names):
        return None
    return (
        f"the seats of {game.name} are for the GM's teams "
        f"({settings_of(game)[OPEN_TEAMS]}): join as one of {', '.join(names)}"
    )


def joined_team(game: Game, name: str, seat: int) -> str:
    """The team a player who just joined plays in, in words: ", in team A" by
    the GM's teams, or by the seat they took (seats in blocks); "" without teams."""
    size = stored_options(game).team_size
    if not size:
        return ""
    names = [n.lower() for n in reserved_names(game)]
    place = names.index(name.lower()) if name.lower() in names else seat
    return f", in {team_name(place // size)}"


def seat_by_teams(session: Session, game: Game) -> None:
    """Seat the players of a full game open for JOIN team after team, in the
    order of the GM's teams, before it deals (nothing to do without them). The
    seats are the teams (teams.team_of): joining order would not give them."""
    names = [n.lower() for n in reserved_names(game)]
    if not names:
        return
    players = players_of(session, game)
    new_seat = {p.seat: names.index(p.name.lower()) for p in players}
    for player in players:  # through negative seats: (game, seat) is unique
        player.seat = -1 - new_seat[player.seat]
        session.add(player)
    session.flush()
    holders = session.exec(select(SeatHolder).where(SeatHolder.game_id == id_of(game)))
    for holder in holders:
        holder.seat = new_seat[holder.seat]
        session.add(holder)
    for player in players:
        player.seat = -1 - player.seat
        session.add(player)
    session.flush()
    pertx.drop(session, "players")
