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


def limit_reason(state: GameState) -> str:
    """The game-over reason of a standard game's round limit, naming the rule that
    put the winner before the next player still in the game."""
    alive = [s for s in gametypes.standings_by_board(state) if state.players[s].alive]
    second = next((s for s in alive if s != state.winner), None)
    rule = gametypes.decided_by(state, state.winner or 0, second, use_points=False)
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
        pairs = ", ".join(
            f"{names[s].name} hunted {names[t].name}"
            for s in state.order
            if (t := state.targets[s]) >= 0 and t != s
        )
        return [f"The secret targets, last held: {pairs}."]
    return []


def points_result(state: GameState, seat: int, result: str) -> str:
    """The Result cell of the standings, with terminator's points."""
    if state.options.goal != gametypes.TERMINATOR:
        return result
    return f"{result}, {plural(gametypes.points(state, seat), 'point')}"
