"""Freestyle play order (option ``play_order = freestyle``): in each round every
player moves once, in the order their orders arrive.

Between two turns of a round the engine stands in phase ROUND with no seat to
move (``current`` is -1): any seat of ``waiting_for`` may take the next turn
(``engine.take_turn``). The round ends when every seat still in the game has
moved (``close_turn``, or a removal), the deadline's missed turns included:
the service plays those in turn order (service/play/deadlines.py). The next
round opens at once. Arrival order is the service's to decide: the engine only
checks that a seat has not moved yet in this round.
"""

from __future__ import annotations

from typing import Final

from pbem.rules import victory
from pbem.rules.events import Event, RoundBegan
from pbem.rules.options import Options
from pbem.rules.state import ROUND, GameState

FREESTYLE: Final = "freestyle"


def is_freestyle(options: Options) -> bool:
    return options.play_order == FREESTYLE


def waiting_for(state: GameState) -> list[int]:
    """The seats that may still move in this round, in turn order (none when a
    turn is under way or the game is not between turns)."""
    if state.phase != ROUND:
        return []
    return [s for s in state.alive_seats() if s not in state.moved]


def turn_taken(state: GameState) -> int:
    """The number of the turn that orders played now take: between the turns of
    a freestyle round, the next one; else the turn under way."""
    return state.turn + 1 if state.phase == ROUND else state.turn


def open_first_round(state: GameState) -> list[Event]:
    """The play begins: round 1 opens for everyone."""
    state.turn = 0
    state.round = 1
    state.current = -1
    state.phase = ROUND
    state.moved = []
    return [RoundBegan(1, tuple(state.alive_seats()))]


def close_turn(state: GameState, seat: int) -> list[Event]:
    """``seat``'s turn is over (its card drawn): back between turns, and the
    next round when it was the last to move."""
    if seat not in state.moved:
        state.moved.append(seat)
    state.current = -1
    state.phase = ROUND
    state.reinforcements = 0
    state.must_trade = False
    state.pending_move = None
    state.taken_this_turn = []
    return next_round_if_done(state)


def next_round_if_done(state: GameState) -> list[Event]:
    """When nobody in the game is left to move: the round limit's end, or the
    next round, open to every seat still in the game."""
    if state.phase != ROUND or waiting_for(state):
        return []
    state.round += 1
    state.moved = []
    limit = state.options.max_turns
    if limit and state.round > limit:
        return list(victory.end_by_turn_limit(state))
    return [RoundBegan(state.round, tuple(state.alive_seats()))]
