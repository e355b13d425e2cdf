"""Team games (doubles, triples): who is whose teammate, what a teammate may do
on a teammate's territories, the turn order, the team's win and a removed
player's handover.

Teams are formed by seat in blocks of ``options.team_size``: seats 1..k are
team A, seats k+1..2k team B, and so on (the order the players are given to
``pbem new`` or join in; the GM chooses teams by that order, or by
``pbem new --teams``, which seats the players in team order). The seats are
stored with the game and its record, so a replay has the same teams. The
neutral seat is on no team. docs/RULES.md ("Teams") is the reading.
"""

from __future__ import annotations

from pbem.rules.events import CardsTaken, Event, TeamHandover
from pbem.rules.state import GameState
from pbem.rules.teamrules import team_name


def team_of(state: GameState, seat: int) -> int | None:
    """The team of ``seat`` (0 for team A), None without teams or for the neutral."""
    size = state.options.team_size
    if not size or seat < 0 or seat >= len(state.players) or state.players[seat].neutral:
        return None
    return seat // size


def is_teammate(state: GameState, seat: int, other: int) -> bool:
    """``other`` is a teammate of ``seat`` (not ``seat`` itself)."""
    if seat == other or not state.options.team_size:
        return False
    team = team_of(state, seat)
    return team is not None and team == team_of(state, other)


def friendly(state: GameState, seat: int, territory: int) -> bool:
    """``territory`` is held by ``seat`` or by a teammate of ``seat``."""
    owner = state.owner[territory]
    return owner == seat or is_teammate(state, seat, owner)


def members(state: GameState, team: int) -> list[int]:
    """The seats of ``team``, in seat order."""
    return [s for s in range(len(state.players)) if team_of(state, s) == team]


def team_count(state: GameState) -> int:
    size = state.options.team_size
    playing = sum(1 for p in state.players if not p.neutral)
    return playing // size if size else 0


def team_label(state: GameState, team: int) -> str:
    """'team A (alice, bob)'."""
    names = ", ".join(state.players[s].name for s in members(state, team))
    return f"{team_name(team)} ({names})"


def winner_words(state: GameState) -> str:
    """Who won, in words: the winner's name, or (a team's win) the team with its
    players, "team A (alice, bob)": the game-over mail's words and `pbem simulate`'s."""
    assert state.winner is not None
    team = team_of(state, state.winner)
    if state.win_reason != "team" or team is None:
        return state.players[state.winner].name
    return team_label(state, team)


def interleave(order: list[int], team_size: int) -> list[int]:
    """The drawn turn order made to alternate teams: the teams play in the order
    their first player was drawn, each team's players in the order drawn, one
    of each team per round of the teams (A1 B1 A2 B2 ...). No die is used."""
    if not team_size:
        return order
    teams: list[int] = []
    lines: dict[int, list[int]] = {}
    for seat in order:
        team = seat // team_size
        if team not in lines:
            teams.append(team)
            lines[team] = []
        lines[team].append(seat)
    return [lines[team][i] for i in range(team_size) for team in teams]


def winning_team(state: GameState) -> int | None:
    """The team every surviving player is on, or None while two teams play."""
    if not state.options.team_size:
        return None
    alive = state.alive_seats()
    team = team_of(state, alive[0]) if alive else None
    if team is None or any(team_of(state, s) != team for s in alive):
        return None
    return team


def winner_seat(state: GameState, team: int) -> int:
    """The seat named as the winner of a team's win: its first survivor in seat order."""
    return next(s for s in members(state, team) if state.players[s].alive)


def heir(state: GameState, seat: int) -> int | None:
    """The first surviving teammate of ``seat`` in seat order, or None."""
    team = team_of(state, seat)
    if team is None:
        return None
    return next((s for s in members(state, team) if s != seat and state.players[s].alive), None)


def hand_over(state: GameState, seat: int, to: int) -> list[Event]:
    """A removed player's territories (with their armies) and cards go to ``to``,
    their first surviving teammate; the player is out of the game."""
    player = state.players[seat]
    places = 0
    for territory, owner in enumerate(state.owner):
        if owner == seat:
            state.owner[territory] = to
            places += 1
            if territory in state.defend_one:
                state.defend_one.remove(territory)  # the heir's own standing orders only
    cards = tuple(player.cards)
    player.cards = []
    state.players[to].cards.extend(cards)
    player.alive = False
    events: list[Event] = [TeamHandover(seat, to, places, len(cards))]
    if cards:
        events.append(CardsTaken(to, cards, seat))
    return events


def fortify_refusal(state: GameState, seat: int, source: int, target: int) -> str:
    """Why a FORTIFY between these territories is refused on ownership."""
    names = state.board.territories
    if state.owner[source] != seat and is_teammate(state, seat, state.owner[source]):
        return (
            f"{names[source].name} is your teammate's: you may fortify into a teammate's "
            "territory, not out of it"
        )
    if not state.options.team_size:
        return "both territories must be yours"
    return (
        f"both territories must be yours, or {names[target].name} a teammate's "
        f"next to {names[source].name}"
    )


def team_win(state: GameState) -> tuple[int, str, str] | None:
    """(seat, "team", detail) when one team is left: the team wins together,
    its players eliminated earlier too; the seat named is its first survivor."""
    team = winning_team(state)
    if team is None:
        return None
    return winner_seat(state, team), "team", team_label(state, team)


def teammate_attack(state: GameState, target: int) -> str:
    """The refusal of an attack on a teammate's territory."""
    owner = state.owner[target]
    name = state.board.territories[target].name
    return (
        f"{name} is your teammate {state.players[owner].name}'s: teammates do not attack each other"
    )


def teammates_territories(state: GameState, seat: int) -> set[int]:
    """The territories of the teammates of ``seat`` (empty without teams): a bot
    never attacks them."""
    if not state.options.team_size:
        return set()
    return {t for t, owner in enumerate(state.owner) if is_teammate(state, seat, owner)}
