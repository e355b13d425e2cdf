"""Who a game waits for, in words: one place for the reports, `pbem show`,
`pbem status`, the GM's mail and the site.

Light on purpose (no picture, no templates): `pbem show` reads it without
loading the report machinery (tests/cli/test_startup_imports.py).
"""

from __future__ import annotations

from pbem.report.textfmt import join_words
from pbem.rules.freestyle import waiting_for
from pbem.rules.state import ENDED, ROUND, SETUP_PHASES, GameState


def next_seat(state: GameState) -> int | None:
    """The seat to move next; None in the setup, once the game is over and
    between the turns of a freestyle round (anyone still to move may)."""
    if state.phase in (*SETUP_PHASES, ENDED) or state.current < 0:
        return None
    return state.current


def to_move(state: GameState) -> str:
    """Who the game waits for once it is under way: "alice to move", or in a
    freestyle round "round 3: bob and carol to move"."""
    if state.phase == ROUND:
        return f"round {state.round}: {join_words(waiting_for_names(state))} to move"
    return f"{state.players[state.current].name} to move"


def round_words(state: GameState) -> str:
    """Freestyle, after a turn: who is still to move in the round, or that the
    next round opens ("" in a game played in turn order)."""
    if state.phase != ROUND:
        return ""
    if not state.moved:
        return f"Round {state.round} opens: every player moves once, in any order"
    return f"Round {state.round}: still to move {join_words(waiting_for_names(state))}"


def waiting_for_names(state: GameState) -> list[str]:
    return [state.players[s].name for s in waiting_for(state)]
