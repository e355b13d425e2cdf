"""Check a mail's orders and say what the reply would say; nothing is applied.

Used by ``pbem check FILE`` (against a map alone, or a stored game's state)
and by the CHECK command.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.orders.errors import (
    OrderProblem,
    OrdersError,
    format_problems,
    format_problems_for_gm,
    in_line_order,
)
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
    text: str,
    board: Board,
    state: GameState | None = None,
    seat: int | None = None,
    what: str = "",
) -> CheckResult:
    """Parse ``text`` and, given a state, validate it for ``seat`` (default: the
    player to move). With ``what`` (e.g. "orders in turn.txt"), the report is
    in the GM's words (`pbem check`): headed as ``gm_heading`` heads it."""
    if state is not None and seat is None and state.phase not in SETUP_PHASES:
        seat = state.current
    try:
        mail = parse_orders(text, board)
    except OrdersError as error:
        problems = all_problems(error, state, seat)
        if what:
            return CheckResult(False, format_problems_for_gm(problems, text, what))
        return CheckResult(False, format_problems(problems, text))
    if what and state is None:
        return CheckResult(True, gm_valid_report(mail, board, None, what))
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


def _against(state: GameState | None) -> str:
    if state is None:
        return "against the map only (no game state: ownership, cards and armies unchecked)"
    if state.phase in SETUP_PHASES:
        return f"against game {state.game}, {PHASE_WORDS[state.phase]}"
    return f"against game {state.game}, turn {state.turn}"


def gm_valid_report(
    mail: ParsedMail, board: Board, state: GameState | None, what: str, seat: int | None = None
) -> str:
    """`pbem check`'s report of valid orders, headed as its refusal is
    ("carol's orders in turn.txt valid, checked against game g1, turn 3;
    nothing was applied:"), then the body of the CHECK reply."""
    head = f"{what} valid, checked {_against(state)}; nothing was applied:"
    return head + "\n\n" + _body(mail, board, state, seat)


def _report(mail: ParsedMail, board: Board, state: GameState | None) -> str:
    out = f"Your orders are valid, checked {_against(state)}. Nothing was applied.\n\n"
    return out + _body(mail, board, state)


def _body(mail: ParsedMail, board: Board, state: GameState | None, seat: int | None = None) -> str:
    out: list[str] = []
    if mail.orders:
        out.append("Orders, as they would be recorded:")
        out += ["  " + line for line in render_orders(mail.orders, board).splitlines()]
        odds = forecast_lines(state, mail.orders, seat) if state is not None else []
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
