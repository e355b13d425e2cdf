"""Who has won: domination, Capital Risk, secret missions, assassin, the turn limit."""

from __future__ import annotations

from typing import Final

from pbem.rules import gametypes, teams
from pbem.rules.board import Board, Mission, MissionKind
from pbem.rules.events import Event, GameWon
from pbem.rules.options import Options
from pbem.rules.state import ENDED, GameState

MISSION_FALLBACK: Final = Mission(
    id="fallback-24", text="Occupy 24 territories", kind=MissionKind.TERRITORIES, count=24
)


def mission_deck(board: Board, options: Options, colours: set[str]) -> list[int]:
    """The missions dealt from: the rulebooks' deck (12 cards on the classic
    map) without the destroy cards of colours not in play ("the rulebook
    removes the cards of colours not chosen"); the older extended cards only
    with mission_deck = extended."""
    extended = options.mission_deck == "extended"
    return [
        i
        for i, m in enumerate(board.missions)
        if (m.kind != MissionKind.DESTROY or m.colour in colours) and (extended or not m.extended)
    ]


def winner(state: GameState) -> tuple[int, str, str] | None:
    """(seat, reason, detail) of the winner, or None while the game goes on."""
    goal = state.options.goal
    if goal == "mission":
        found = _mission_winner(state)
        if found is not None:
            return found
    elif goal == "capital":
        found = _capital_winner(state)
        if found is not None:
            return found
    elif goal == gametypes.ASSASSIN:
        found = gametypes.assassin_winner(state)
        if found is not None:
            return found
    if state.options.team_size:  # teams play domination only (Options refuses the rest)
        return teams.team_win(state)
    alive = state.alive_seats()
    if len(alive) == 1:
        return alive[0], "domination", ""
    return None


def mission_of(state: GameState, seat: int) -> Mission | None:
    player = state.players[seat]
    if player.mission is None:
        return None
    mission = state.board.missions[player.mission]
    if player.mission_fallback:
        return fallback_of(mission)
    return mission


def fallback_of(mission: Mission) -> Mission:
    """What a destroy mission becomes when its target is gone or is the holder:
    the map's own fallback when the map gives one (a Domination .cards file
    does), else the rulebook's 24 territories."""
    if mission.count:
        return Mission(
            id=f"{mission.id}-fallback",
            text=f"Occupy {mission.count} territories"
            + (
                f" with at least {mission.min_armies} armies each" if mission.min_armies > 1 else ""
            ),
            kind=MissionKind.TERRITORIES,
            count=mission.count,
            min_armies=mission.min_armies,
        )
    return MISSION_FALLBACK


def mission_complete(state: GameState, seat: int) -> bool:
    mission = mission_of(state, seat)
    if mission is None:
        return False
    owner = state.owner
    if mission.kind == MissionKind.TERRITORIES:
        return (
            sum(
                1
                for t, o in enumerate(owner)
                if o == seat and state.armies[t] >= mission.min_armies
            )
            >= mission.count
        )
    if mission.kind == MissionKind.CONTINENTS:
        held = set(state.continents_held(seat))
        if not all(c in held for c in mission.continents):
            return False
        return len(held - set(mission.continents)) >= mission.extra_continents
    if mission.kind == MissionKind.DESTROY:
        # "If your mission is to destroy all the yellow troops and another player
        # actually removes the final yellow armies from the board, that player
        # has helped you complete your Secret Mission." Whoever took them, then.
        target = _seat_of_colour(state, mission.colour)
        if state.options.rules_version == 1:
            # rules version 1: only the holder's own elimination of the target
            return target is not None and state.players[target].eliminated_by == seat
        return target is not None and _destroyed_by_a_player(state, target)
    return False


def _destroyed_by_a_player(state: GameState, seat: int) -> bool:
    """Taken off the board by a player's attack (not removed to the neutral)."""
    by = state.players[seat].eliminated_by
    return by is not None and not state.players[by].neutral


def _seat_of_colour(state: GameState, colour: str) -> int | None:
    for seat, p in enumerate(state.players):
        if p.colour == colour and not p.neutral:
            return seat
    return None


def _mission_winner(state: GameState) -> tuple[int, str, str] | None:
    """Whoever completed their mission; the player to move first, then turn
    order. With mission_win = own_turn only the player to move can win: a
    mission completed on another's turn wins at the start of its holder's."""
    order = state.alive_seats()
    if state.current in order:
        i = order.index(state.current)
        order = order[i:] + order[:i]
    if state.options.mission_win == "own_turn":
        order = order[:1] if order and order[0] == state.current else []
    for seat in order:
        if state.players[seat].mission is not None and mission_complete(state, seat):
            mission = mission_of(state, seat)
            return seat, "mission", mission.text if mission else ""
    return None


def on_elimination(state: GameState, loser: int, by: int) -> list[Event]:
    """Record who eliminated whom. A destroy mission is complete when its target
    is taken off the board by any player (mission_complete). A target removed
    from the game instead (resigned, or removed by the GM: its armies stay,
    neutral) is no longer in play: its holders need 24 territories."""
    state.players[loser].eliminated_by = by
    if state.options.goal in (gametypes.ASSASSIN, gametypes.TERMINATOR):
        return gametypes.on_elimination(state, loser, by)
    if state.options.rules_version == 1:
        return _on_elimination_v1(state, loser, by)
    if state.options.goal != "mission" or not state.players[by].neutral:
        return []
    colour = state.players[loser].colour
    for seat, player in enumerate(state.players):
        mission = mission_of(state, seat)
        if mission is not None and mission.kind == MissionKind.DESTROY and mission.colour == colour:
            player.mission_fallback = True
    return []


def _on_elimination_v1(state: GameState, loser: int, by: int) -> list[Event]:
    """Rules version 1: a destroy mission's target eliminated by anyone but
    its holder (another player, or removed to the neutral) leaves the holder
    needing 24 territories."""
    if state.options.goal != "mission":
        return []
    colour = state.players[loser].colour
    for seat, player in enumerate(state.players):
        mission = mission_of(state, seat)
        if mission is None or mission.kind != MissionKind.DESTROY or mission.colour != colour:
            continue
        if seat != by:
            player.mission_fallback = True
    return []


def _capital_winner(state: GameState) -> tuple[int, str, str] | None:
    hqs = [(seat, state.players[seat].hq) for seat in state.order]
    if any(hq is None for _, hq in hqs):
        return None
    for seat in state.alive_seats():
        own = state.players[seat].hq
        if state.owner[own] != seat:  # type: ignore[index]
            continue
        others = [hq for s, hq in hqs if s != seat]
        held = sum(1 for hq in others if hq is not None and state.owner[hq] == seat)
        if state.options.capitals_to_win:
            needed = min(len(others), 2 if len(state.order) <= 4 else 3)
        else:
            needed = len(others)
        if held >= needed:
            return seat, "capitals", f"holds {held + 1} headquarters"
    return None


def end_by_turn_limit(state: GameState) -> list[GameWon]:
    """After max_turns rounds: most territories, then most armies, then turn order
    (terminator: most points first)."""
    if state.options.goal == gametypes.TERMINATOR:
        return _end_terminator(state)
    alive = state.alive_seats()
    best = max(
        alive,
        key=lambda s: (state.territory_count(s), state.army_count(s), -state.order.index(s)),
    )
    state.winner = best
    state.win_reason = "max_turns"
    state.phase = ENDED
    rounds = state.options.max_turns
    return [GameWon(best, "max_turns", f"most territories after {rounds} round(s)")]


def limit_ends_on_removal(state: GameState) -> bool:
    """Terminator: a player removed during the last turn of round N ends the game
    there. (Standard games play on into round N + 1 for one turn, as they always
    have: stored games replay the same.)"""
    limit = state.options.max_turns
    return state.options.goal == gametypes.TERMINATOR and 0 < limit < state.round


def _end_terminator(state: GameState) -> list[GameWon]:
    """Terminator at the round limit: the first of the standings still in the
    game wins; the detail names the rule that put them before the next."""
    ranked = [s for s in gametypes.standings(state) if state.players[s].alive]
    best = ranked[0]
    second = ranked[1] if len(ranked) > 1 else None
    rule = gametypes.decided_by(state, best, second, use_points=True)
    state.winner = best
    state.win_reason = "points"
    state.phase = ENDED
    points = gametypes.points(state, best)
    rounds = state.options.max_turns
    detail = (
        f"{points} point{'' if points == 1 else 's'}, decided by {rule}, "
        f"after {rounds} round{'' if rounds == 1 else 's'}"
    )
    return [GameWon(best, "points", detail)]
