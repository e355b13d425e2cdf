"""Check a mail's orders and say what the reply would say; nothing is applied.

Used by ``pbem check FILE`` (against a map alone, or a stored game's state)
and by the CHECK command.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pbem.orders.errors import (
    OrderProblem,
    OrdersError,
    closest,
    did_you_mean,
    format_problems,
    format_problems_for_gm,
    in_line_order,
    territory_candidates,
)
from pbem.orders.forecast import forecast_lines
from pbem.orders.lexer import source_lines
from pbem.orders.mailorders import validate_mail
from pbem.orders.model import TURN_KEYWORDS, ParsedMail
from pbem.orders.parser import parse_orders
from pbem.orders.render import render_orders
from pbem.orders.setupcheck import PHASE_WORDS
from pbem.rules.board import Board
from pbem.rules.state import ROUND, SETUP_PHASES, GameState


def all_problems(
    error: OrdersError, state: GameState | None, seat: int | None, text: str | None = None
) -> list[OrderProblem]:
    """Every problem one pass can find in a mail whose lines did not all parse:
    the lines that could not be read, and every line that was read validated
    against the game, each against the state the lines read before it make (an
    unreadable line is skipped, as if it were not there). The totals of the turn
    are told unless an unreadable line may have changed them (a line that may be
    a TRADE: the armies due; a PLACE: only too many armies is certain), see
    ``ParsedMail.unread``. In line order (errors.in_line_order).

    With the mail's ``text``, an unreadable line whose every problem has one fix
    is read again with its fixes applied and checked like any line: what it would
    still get wrong is told with its fix (``OrderProblem.with_fix``); a fixed line
    that is fine makes the state the lines below it are checked against."""
    problems = list(error.problems)
    partial = error.partial
    if state is None or seat is None or not isinstance(partial, ParsedMail):
        return in_line_order(problems)
    if text is not None:
        problems = [_owned_first(p, state, seat, text) for p in problems]
    fixes = single_fixes(problems, text) if text is not None else {}
    if text is not None and fixes:
        return in_line_order(_with_fixes(state, seat, text, fixes, problems))
    return in_line_order(_validated(state, seat, problems, partial))


def _validated(
    state: GameState, seat: int, problems: list[OrderProblem], partial: ParsedMail
) -> list[OrderProblem]:
    """The unreadable lines' problems and those of the lines read, validated."""
    seen = {(p.line, p.message) for p in problems}
    checked = validate_mail(state, seat, partial)
    return problems + [p for p in checked if (p.line, p.message) not in seen]


def _checked(state: GameState, seat: int, text: str, board: Board) -> list[OrderProblem]:
    """Every problem of ``text`` as a mail, as ``all_problems`` finds them without fixes."""
    try:
        mail = parse_orders(text, board)
    except OrdersError as error:
        if not isinstance(error.partial, ParsedMail):
            return list(error.problems)
        return _validated(state, seat, list(error.problems), error.partial)
    return validate_mail(state, seat, mail)


_OWN_TERRITORY = ("PLACE", "ATTACK")  # PLACE's targets and ATTACK's source: the player's


def _owned_first(problem: OrderProblem, state: GameState, seat: int, text: str) -> OrderProblem:
    """A misspelt territory that must be the player's (a PLACE's, an ATTACK's
    source) is told to be only the player's territories among the names it is
    near, when one of them is (the map-only reading cannot know whose they are)."""
    lines = source_lines(text)
    if not 0 < problem.line <= len(lines) or not problem.text or problem.column < 1:
        return problem
    line = lines[problem.line - 1]
    words = line.split()
    keyword = words[0].upper() if words else ""
    arrow = line.find("->")
    if keyword not in _OWN_TERRITORY or (keyword == "ATTACK" and 0 <= arrow < problem.column):
        return problem
    board = state.board
    hints = closest(problem.text, territory_candidates(board))
    if problem.message != f"{problem.text}: no such territory{did_you_mean(hints)}":
        return problem
    owned = [h for h in hints if state.owner[board.territory(h)] == seat]
    if not owned or len(owned) == len(hints):
        return problem
    message = f"{problem.text}: no such territory{did_you_mean(owned)}"
    return replace(problem, message=message, suggestion=owned[0])


def single_fixes(problems: list[OrderProblem], text: str) -> dict[int, str]:
    """Line number -> the line with its fixes applied, for each line whose every
    problem names one fix ("did you mean Venezuela?") of the text it points at."""
    lines = source_lines(text)
    by_line: dict[int, list[OrderProblem]] = {}
    for problem in problems:
        by_line.setdefault(problem.line, []).append(problem)
    fixes: dict[int, str] = {}
    for number, found in by_line.items():
        if not 0 < number <= len(lines):
            continue
        line = lines[number - 1]
        for problem in sorted(found, key=lambda p: -p.column):
            start = problem.column - 1
            single = problem.message.endswith(f"did you mean {problem.suggestion}?")
            if not (problem.suggestion and single and problem.text and start >= 0):
                break
            if line[start : start + len(problem.text)] != problem.text:
                break
            line = line[:start] + problem.suggestion + line[start + len(problem.text) :]
        else:
            fixes[number] = line
    return fixes


_ORDERED = TURN_KEYWORDS[:4]  # TRADE, PLACE, ATTACK, FORTIFY: in this order


def _in_place(text: str, fixes: dict[int, str], board: Board) -> dict[int, str]:
    """The ``fixes`` whose fixed order no order below it must come before: a
    fixed ATTACK above a PLACE stays unread, so the PLACE is told to move above it
    (validate.after_unread) rather than be read as an elimination's PLACE."""
    try:
        orders = parse_orders(text, board).orders
    except OrdersError as error:
        partial = error.partial
        orders = partial.orders if isinstance(partial, ParsedMail) else []
    ranks = [(o.line, _ORDERED.index(o.keyword)) for o in orders if o.keyword in _ORDERED]
    kept: dict[int, str] = {}
    for number, line in fixes.items():
        own = [rank for at, rank in ranks if at == number]
        if own and any(at > number and rank < own[0] for at, rank in ranks):
            continue
        kept[number] = line
    return kept


def _with_fixes(
    state: GameState, seat: int, text: str, fixes: dict[int, str], problems: list[OrderProblem]
) -> list[OrderProblem]:
    """The problems of a mail whose lines ``fixes`` may be fixed: the mail with
    every fix tells what the fixed lines still get wrong; the mail with the fixes
    of the lines that are then fine tells the problems of every other line."""
    lines = source_lines(text)

    def fixed(which: dict[int, str]) -> str:
        return "\n".join(which.get(n + 1, line) for n, line in enumerate(lines))

    tried = _checked(state, seat, fixed(fixes), state.board)
    wrong: dict[int, list[str]] = {}
    for problem in in_line_order(tried):
        if problem.line in fixes:
            wrong.setdefault(problem.line, []).append(problem.message)
    good = {n: line for n, line in fixes.items() if n not in wrong}
    good = _in_place(fixed(good), good, state.board)
    rest = _checked(state, seat, fixed(good), state.board)
    out = [p for p in rest if p.line not in fixes]
    for number in fixes:
        own = [p for p in problems if p.line == number]
        last = own[-1]
        if number in wrong:
            last = replace(last, with_fix="; ".join(wrong[number]))
        out += own[:-1] + [last]
    return out


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
        problems = all_problems(error, state, seat, text)
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
    if state.phase == ROUND:  # freestyle: the board as it stands between turns
        return f"against game {state.game}, round {state.round} as it stands now"
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
