"""Checks of turn orders that rules version 3 (issue 33) added: the max_armies
cap on a PLACE, the armies due when the player's territories cannot hold them,
and a TRADE written after an ATTACK (the choice of an elimination's forced
trade). validate.py calls them; each returns the words of a problem or None.
"""

from __future__ import annotations

from collections.abc import Iterable

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
