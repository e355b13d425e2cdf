"""Checks of turn orders that rules version 3 (issue 33) added: the max_armies
cap on a PLACE, the COMMANDER word, the armies due when the player's territories cannot hold them,
and a TRADE written after an ATTACK (the choice of an elimination's forced
trade). validate.py calls them; each returns the words of a problem or None.
"""

from __future__ import annotations

from collections.abc import Iterable

from pbem.rules.options import Options
from pbem.rules.state import GameState

FORCED_AT = 6  # cards after an elimination that force a trade (000, 002, 003)


def version3(state: GameState) -> bool:
    return state.options.rules_version >= 3


def over_cap(
    state: GameState, seat: int, upper: list[int], territory: int, armies: int
) -> str | None:
    """A PLACE of ``armies`` on ``territory`` past max_armies: the problem, naming
    the cap, the room left there and in the player's other territories.
    ``upper``: the armies each territory holds when this order runs."""
    cap = state.options.max_armies
    if not cap or upper[territory] + armies <= cap:
        return None
    name = state.board.territories[territory].name
    room = max(0, cap - upper[territory])
    other = sum(
        max(0, cap - upper[t])
        for t in range(len(state.owner))
        if state.owner[t] == seat and t != territory
    )
    elsewhere = (
        f"; your other territories have room for {other} more"
        if other
        else "; your other territories are full too"
    )
    return (
        f"{name} would hold {upper[territory] + armies} armies, over the cap of {cap} "
        f"(max_armies): room for {room} more there{elsewhere}"
    )


def room_for_due(state: GameState, seat: int, added: dict[int, int]) -> int:
    """How many armies the player's territories can take this turn under
    max_armies (``added``: the +2s of the turn's trades); a large number
    without a cap."""
    cap = state.options.max_armies
    if not cap:
        return 1 << 40
    return sum(
        max(0, cap - state.armies[t] - added.get(t, 0))
        for t in range(len(state.owner))
        if state.owner[t] == seat
    )


def no_forced_trade(state: GameState, hand: int, victims: Iterable[int]) -> str | None:
    """A TRADE after an ATTACK when no elimination can bring the hand to 6 cards:
    ``hand``, the cards held when the attacks begin; ``victims``, the players
    owning the territories the earlier ATTACKs aim at."""
    if state.options.card_values == "none":
        return "these rules use no cards"
    most = hand + sum(len(state.players[v].cards) for v in set(victims))
    if most >= FORCED_AT:
        return None
    return (
        "a TRADE after an ATTACK chooses the sets of the trade forced when an "
        f"elimination leaves you {FORCED_AT} or more cards, and none can here: you hold "
        f"{hand}, and the players your ATTACKs aim at hold {most - hand}"
    )


def commander_problem(options: Options) -> str | None:
    """Why ATTACK ... COMMANDER is refused in a game of ``options``, or None. The
    order is of rules version 3; under versions 1 and 2 it is refused, as those
    versions' reader refused the word."""
    if not options.commander:
        return "COMMANDER: these rules have no commander"
    if options.rules_version < 3:
        return (
            f"COMMANDER: this game plays rules version {options.rules_version}, where the "
            "commander is used on the turn's first roll where it wins a comparison; the "
            "order came with version 3"
        )
    return None


def due_past_room(placed: int, due: int, room: int, cap: int) -> str:
    """The player's territories cannot hold the ``due`` armies under max_armies
    and the PLACE orders do not fill the ``room`` there is: what to place."""
    return (
        f"PLACE orders place {placed} armies; {due} are due this turn, but your "
        f"territories have room for only {room} under the cap of {cap} (max_armies): "
        f"place {room} (the other {due - room} are lost)"
    )
