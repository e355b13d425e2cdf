"""A whole mail's orders against a game's state: its TURN guard, then its
setup or turn orders (setupcheck.py, validate.py), every problem in line order.

Kept apart from validate.py, which walks one turn's orders: a mail may hold
a setup's orders or a turn's, and its guard is about the mail.
"""

from __future__ import annotations

from pbem.orders.errors import OrderProblem, in_line_order
from pbem.orders.model import ParsedMail
from pbem.orders.setupcheck import fog_neutral_problems, setup_cap_problems, validate_setup
from pbem.orders.validate import checked_turn
from pbem.rules.actions import TurnAction
from pbem.rules.state import ROUND, SETUP_PHASES, GameState


def validate_mail(state: GameState, seat: int, mail: ParsedMail) -> list[OrderProblem]:
    """The TURN guard, then the orders against the phase the game is in; the
    problems in line order (errors.in_line_order).

    A mail with no orders (only commands or press) has no problems here. The
    partial mail of an OrdersError is checked too: its lines that were read, in
    turn, and the totals its unreadable lines cannot change (``mail.unread``).
    """
    return checked_mail(state, seat, mail)[0]


def checked_mail(
    state: GameState, seat: int, mail: ParsedMail
) -> tuple[list[OrderProblem], list[TurnAction]]:
    """``validate_mail``'s problems and, for a turn without problems, its actions
    (``turn_actions``), from one walk over the orders."""
    problems: list[OrderProblem] = []
    if mail.turn is not None:
        asked = mail.turn.value
        expected = state.turn
        if state.phase in SETUP_PHASES:
            now = "the game is still being set up"
        elif state.phase == ROUND:  # freestyle: the turn's number is not known in advance
            expected = state.round
            now = f"the game is in round {state.round} (freestyle: TURN names the round)"
        else:
            now = f"the game is at turn {state.turn}"
        if state.phase in SETUP_PHASES or asked != expected:
            problems.append(
                OrderProblem(mail.turn.line, mail.turn.column, str(asked), f"TURN {asked}: {now}")
            )
    if not mail.orders:
        return problems, []
    if state.phase in SETUP_PHASES:
        fogged, hidden = fog_neutral_problems(state, seat, mail.orders)
        found = validate_setup(state, seat, mail.orders, mail.unread_orders)
        if hidden:  # (their "X is not neutral" would tell whose X is)
            names = {(line, state.board.territories[t].name) for line, t in hidden}
            found = [p for p in found if (p.line, p.text) not in names]
        return in_line_order(
            problems + found + fogged + setup_cap_problems(state, seat, mail.orders)
        ), []
    found, actions = checked_turn(state, seat, mail.orders, mail.unread)
    if problems or found:
        return in_line_order(problems + found), actions
    return problems, actions
