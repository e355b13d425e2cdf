"""The defender's choice of dice: the standing order DEFEND WITH n IN territory.

The rulebooks let the defender roll one die instead of two; by mail the
choice is a standing order, kept in ``GameState.defend_one`` across turns
and ended when the territory changes hands (attacking.attack, engine.remove_player).
In a game of two players and the neutral, the player who rolls for the neutral
(the attacker's opponent) may give it for a neutral territory (rules version
3): kept per player in ``GameState.defend_neutral``.
"""

from __future__ import annotations

from typing import Final

from pbem.rules import engine
from pbem.rules.errors import RulesError
from pbem.rules.events import DefenceOrdered, Event
from pbem.rules.state import GameState

NO_DEFEND_IN_V1: Final = (
    "DEFEND: this game plays rules version 1, where a defender always rolls the most dice"
)


def defender_dice(state: GameState, target: int) -> int:
    """Dice the defender of ``target`` rolls against the player to move: the
    most allowed, or one by its owner's standing order DEFEND WITH 1 (for a
    neutral territory, the order of the player who rolls for the neutral)."""
    if state.armies[target] < 2 or target in state.defend_one:
        return 1
    return 1 if neutral_one_die(state, target) else 2


def neutral_one_die(state: GameState, target: int) -> bool:
    """Two players: "your opponent rolls to defend that neutral territory"
    (000), so the opponent of the player to move chose one die for it."""
    if not state.defend_neutral:
        return False
    me = state.current
    return any(t == target and seat != me for seat, t in state.defend_neutral)


def defends_neutral(state: GameState, territory: int) -> bool:
    """Whether the player to move may give DEFEND for ``territory`` as the one
    who rolls for the neutral: rules version 3, a game of two players and the
    neutral, the territory the neutral's. (Versions 1-2 refused it.)"""
    neutral = state.neutral_seat
    return (
        state.options.rules_version >= 3
        and neutral is not None
        and len(state.order) == 2
        and state.owner[territory] == neutral
    )


def set_defence(
    state: GameState, territory: int, dice: int, seat: int | None = None
) -> list[Event]:
    """The standing order DEFEND WITH ``dice`` IN ``territory`` of the player to
    move: 1 die from now on, or 2 (the most, the default) to clear it. For a
    neutral territory of a two-player game (version 3) the order is the
    player's own: it counts when the other player attacks the territory."""
    engine.expect_turn(state, seat)
    if state.options.rules_version == 1:
        # rules version 1 had no DEFEND: a defender always rolled the most dice
        raise RulesError("defence", NO_DEFEND_IN_V1)
    engine.check_territory(state, territory, "defence")
    me = state.current
    neutral = state.owner[territory] != me and defends_neutral(state, territory)
    if state.owner[territory] != me and not neutral:
        name = state.board.territories[territory].name
        raise RulesError("defence", f"{name} is not {state.players[me].name}'s")
    if dice not in (1, 2):
        raise RulesError("defence", "a defender rolls 1 or 2 dice")
    if neutral:
        pair = (me, territory)
        if dice == 1 and pair not in state.defend_neutral:
            state.defend_neutral.append(pair)
            state.defend_neutral.sort()
        elif dice == 2 and pair in state.defend_neutral:
            state.defend_neutral.remove(pair)
        return [DefenceOrdered(me, territory, dice)]
    if dice == 1 and territory not in state.defend_one:
        state.defend_one.append(territory)
        state.defend_one.sort()
    elif dice == 2 and territory in state.defend_one:
        state.defend_one.remove(territory)
    return [DefenceOrdered(me, territory, dice)]
