"""Team games: what the order check says of a FORTIFY into a teammate's
territory (docs/RULES.md, "Teams"). PLACE on a teammate's territory and the
refusal of an ATTACK on one are checked in validate.py with rules/teams.py."""

from __future__ import annotations

from collections.abc import Callable, Collection

from pbem.orders.errors import OrderProblem, problem_at
from pbem.orders.model import Order
from pbem.rules.actions import Fortify
from pbem.rules.state import GameState
from pbem.rules.teams import fortify_refusal, teammate_attack
from pbem.rules.teams import friendly as friendly  # (for validate.py)
from pbem.rules.teams import is_teammate as is_teammate


def fortify_problems(
    state: GameState, seat: int, order: Order, mine: Callable[[int], bool], action: Fortify
) -> list[OrderProblem] | None:
    """The problems of a FORTIFY whose target is a teammate's territory (none:
    an empty list), or None when the target is not a teammate's. It must come
    from one of the player's own territories, next to the target: never out
    of a teammate's territory, never through territories to a far one."""
    source, target = action.source, action.target
    if mine(target) or not is_teammate(state, seat, state.owner[target]):
        return None  # (a territory an earlier ATTACK takes is the player's own by then)
    names = state.board.territories
    if not mine(source):
        message = fortify_refusal(state, seat, source, target)
        return [problem_at(order, message, 1, names[source].name)]
    if not state.board.adjacent(source, target):
        message = (
            f"{names[target].name} is your teammate's and not next to {names[source].name}: "
            "a move into a teammate's territory goes to an adjacent one, never through others"
        )
        return [problem_at(order, message, 2, names[target].name)]
    return []


def attack_problems(
    state: GameState, seat: int, order: Order, target: int, taken: Collection[int]
) -> list[OrderProblem]:
    """An ATTACK on a teammate's territory is refused (none taken by an earlier
    ATTACK of the same orders: those are the player's own by then)."""
    if target in taken or not is_teammate(state, seat, state.owner[target]):
        return []
    name = state.board.territories[target].name
    return [problem_at(order, teammate_attack(state, target), 1, name)]


def placeable(state: GameState, seat: int, territory: int, taken: Collection[int]) -> bool:
    """A PLACE after an ATTACK may go on the player's territory, one an earlier
    ATTACK takes, or (team games) a teammate's."""
    return territory in taken or friendly(state, seat, territory)
