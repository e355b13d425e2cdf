"""The defender's choice of dice: the standing order DEFEND WITH n IN territory.

The rulebooks let the defender roll one die instead of two; by mail the
choice is a standing order, kept in ``GameState.defend_one`` across turns
and ended when the territory changes hands (attacking.attack, engine.remove_player).
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
    """Dice the defender of ``target`` rolls: the most allowed, or one by its
    owner's standing order DEFEND WITH 1."""
    return 1 if state.armies[target] < 2 or target in state.defend_one else 2


def set_defence(
    state: GameState, territory: int, dice: int, seat: int | None = None
) -> list[Event]:
    """The standing order DEFEND WITH ``dice`` IN ``territory`` of the player to
    move: 1 die from now on, or 2 (the most, the default) to clear it."""
    engine.expect_turn(state, seat)
    if state.options.rules_version == 1:
        # rules version 1 had no DEFEND: a defender always rolled the most dice
        raise RulesError("defence", NO_DEFEND_IN_V1)
    engine.check_territory(state, territory, "defence")
    me = state.current
    if state.owner[territory] != me:
        name = state.board.territories[territory].name
        raise RulesError("defence", f"{name} is not {state.players[me].name}'s")
    if dice not in (1, 2):
        raise RulesError("defence", "a defender rolls 1 or 2 dice")
    if dice == 1 and territory not in state.defend_one:
        state.defend_one.append(territory)
        state.defend_one.sort()
    elif dice == 2 and territory in state.defend_one:
        state.defend_one.remove(territory)
    return [DefenceOrdered(me, territory, dice)]
