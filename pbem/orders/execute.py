"""Run validated orders through the rules engine, on a copy of the state.

All or nothing: the orders are validated first (OrdersError lists every
problem) and run on ``state.copy()``, so the caller's state is never
touched, whatever happens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pbem.orders.errors import OrderProblem, OrdersError
from pbem.orders.model import Order
from pbem.orders.setupcheck import setup_actions, validate_setup
from pbem.orders.validate import turn_actions
from pbem.rules.actions import SetupAction
from pbem.rules.engine import ShuffleStream
from pbem.rules.events import Event
from pbem.rules.setupplan import play_setup
from pbem.rules.state import GameState
from pbem.rules.turnplan import play_turn


def execute_turn(
    state: GameState, orders: Sequence[Order], rng: ShuffleStream
) -> tuple[GameState, list[Event]]:
    """The current player's turn: the new state and what happened."""
    actions = turn_actions(state, orders)
    new = state.copy()
    events = play_turn(new, actions, rng)
    return new, events


def execute_setup(
    state: GameState, orders_by_seat: Mapping[int, Sequence[Order]], rng: ShuffleStream
) -> tuple[GameState, list[Event]]:
    """One setup phase for every player at once (setup is simultaneous).

    Problems name the player they belong to, since they come from several mails.
    """
    problems: list[OrderProblem] = []
    actions: dict[int, list[SetupAction]] = {}
    for seat in state.order:
        name = state.players[seat].name
        if seat not in orders_by_seat:
            problems.append(OrderProblem(0, 0, "", f"{name}: no setup orders"))
            continue
        found = validate_setup(state, seat, orders_by_seat[seat])
        problems += [replace(p, message=f"{name}: {p.message}") for p in found]
        actions[seat] = setup_actions(orders_by_seat[seat])
    for seat in sorted(set(orders_by_seat) - set(state.order)):
        problems.append(OrderProblem(0, 0, "", f"seat {seat} is not a player of this game"))
    if problems:
        raise OrdersError(problems)
    new = state.copy()
    events = play_setup(new, actions, rng)
    return new, events
