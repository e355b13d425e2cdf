"""What the game-over mail says of the game types and the round limit: the rule
that decided at the round limit, terminator's points, and (once the game is
over, and only then) every assassin target."""

from __future__ import annotations

from pbem.report.textfmt import plural
from pbem.rules import gametypes
from pbem.rules.state import GameState

_LIMIT_RULES = {
    "most territories": "most territories",
    "most armies": "most armies (territories tied)",
    "turn order": "the earlier in turn order (territories and armies tied)",
}


_POINTS_RULES = {
    "most points": "most points",
    "most territories": "most territories (points tied)",
    "most armies": "most armies (points and territories tied)",
    "turn order": "the earlier in turn order (points, territories and armies tied)",
}


def limit_reason(state: GameState) -> str:
    """The game-over reason of the round limit, naming the rule that put the
    winner before the next player still in the game (terminator: points first)."""
    points = state.options.goal == gametypes.TERMINATOR
    ranking = gametypes.standings(state) if points else gametypes.standings_by_board(state)
    alive = [s for s in ranking if state.players[s].alive]
    second = next((s for s in alive if s != state.winner), None)
    rule = gametypes.decided_by(state, state.winner or 0, second, use_points=points)
    if points:
        return f"on the round limit: {_POINTS_RULES[rule]}"
    return f"on the turn limit: {_LIMIT_RULES[rule]}"


def end_notes(state: GameState) -> list[str]:
    """Lines under the winner: terminator's points, assassin's targets (the game is
    over: nothing is secret any more)."""
    goal = state.options.goal
    names = state.players
    if goal == gametypes.TERMINATOR:
        table = ", ".join(
            f"{names[s].name} {plural(gametypes.points(state, s), 'point')}"
            for s in gametypes.standings(state)
        )
        return [f"Points: {table}."]
    if goal == gametypes.ASSASSIN and state.targets:
        return _assassin_notes(state)
    return []


def _assassin_notes(state: GameState) -> list[str]:
    """How the hunter won, and every target at the end (a player removed from the
    game had passed theirs on: they are left out)."""
    names = state.players
    lines = []
    winner = state.winner
    target = gametypes.target_of(state, winner)
    if state.win_reason == gametypes.ASSASSIN and winner is not None and target is not None:
        by = names[target].eliminated_by
        killer = names[by].name if by is not None else "?"
        lines.append(
            f"{names[winner].name}'s target {names[target].name} was eliminated by {killer}."
        )
    pairs = ", ".join(
        f"{names[s].name} hunted {names[t].name}"
        for s in state.order
        if (t := state.targets[s]) >= 0 and t != s and not _removed(state, s)
    )
    return lines + [f"The secret targets at the end: {pairs}."]


def _removed(state: GameState, seat: int) -> bool:
    """Out of the game without an attack: resigned or removed (armies to the neutral)."""
    by = state.players[seat].eliminated_by
    return not state.players[seat].alive and by is not None and state.players[by].neutral


def points_result(state: GameState, seat: int, result: str) -> str:
    """The Result cell of the standings, with terminator's points."""
    if state.options.goal != gametypes.TERMINATOR:
        return result
    return f"{result}, {plural(gametypes.points(state, seat), 'point')}"
