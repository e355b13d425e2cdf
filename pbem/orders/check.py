"""Check a mail's orders and say what the reply would say; nothing is applied.

Used by ``pbem check FILE`` (against a map alone, or a stored game's state)
and by the CHECK command.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.orders.errors import OrderProblem, OrdersError, format_problems, in_line_order
from pbem.orders.forecast import forecast_lines
from pbem.orders.model import ParsedMail
from pbem.orders.parser import parse_orders
from pbem.orders.render import render_orders
from pbem.orders.setupcheck import PHASE_WORDS
from pbem.orders.validate import validate_mail
from pbem.rules.board import Board
from pbem.rules.state import SETUP_PHASES, GameState


def all_problems(
    error: OrdersError, state: GameState | None, seat: int | None
) -> list[OrderProblem]:
    """Every problem one pass can find in a mail whose lines did not all parse:
    the lines that could not be read, and every line that was read validated
    against the game, each against the state the lines read before it make (an
    unreadable line is skipped, as if it were not there). The totals of the turn
    are told unless an unreadable line may have changed them (a line that may be
    a TRADE: the armies due; a PLACE: only too many armies is certain), see
    ``ParsedMail.unread``. In line order (errors.in_line_order)."""
    problems = list(error.problems)
    partial = error.partial
    if state is None or seat is None or not isinstance(partial, ParsedMail):
        return in_line_order(problems)
    seen = {(p.line, p.message) for p in problems}
    checked = validate_mail(state, seat, partial)
    problems += [p for p in checked if (p.line, p.message) not in seen]
    return in_line_order(problems)


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    report: str  # the reply body, as the mail would carry it


def check_text(
    text: str, board: Board, state: GameState | None = None, seat: int | None = None
) -> CheckResult:
    """Parse ``text`` and, given a state, validate it for ``seat`` (default: the
    player to move)."""
    if state is not None and seat is None and state.phase not in SETUP_PHASES:
        seat = state.current
    try:
        mail = parse_orders(text, board)
    except OrdersError as error:
        return CheckResult(False, format_problems(all_problems(error, state, seat), text))
    if state is not None:
        if seat is None:
            if mail.orders:
                message = "setup orders are checked for one player: say which"
                return CheckResult(False, format_problems([OrderProblem(0, 0, "", message)], text))
            seat = -1
        problems = validate_mail(state, seat, mail)
        if problems:
            return CheckResult(False, format_problems(problems, text))
    return CheckResult(True, _report(mail, board, state))


def _report(mail: ParsedMail, board: Board, state: GameState | None) -> str:
    if state is None:
        against = "against the map only (no game state: ownership, cards and armies unchecked)"
    elif state.phase in SETUP_PHASES:
        against = f"against game {state.game}, {PHASE_WORDS[state.phase]}"
    else:
        against = f"against game {state.game}, turn {state.turn}"
    out = [f"Your orders are valid, checked {against}. Nothing was applied.", ""]
    if mail.orders:
        out.append("Orders, as they would be recorded:")
        out += ["  " + line for line in render_orders(mail.orders, board).splitlines()]
        odds = forecast_lines(state, mail.orders) if state is not None else []
        if odds:
            out += [""] + odds
    else:
        out.append("No orders.")
    if mail.commands:
        out += ["", "Commands:"] + ["  " + c.text.strip() for c in mail.commands]
    for press in mail.press:
        lines = len(press.body.split("\n")) if press.body else 0
        out += ["", f"Press to {press.recipient}: {lines} line{'' if lines == 1 else 's'}"]
    return "\n".join(out) + "\n"
