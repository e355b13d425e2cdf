"""What the GM's hand-play commands say of the orders they take (`pbem
adjudicate`, `pbem check --game`): the odds of the attacks, as the CHECK mail
gives them, and once played, what the turn did, as its report says it."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.engine import Engine
from sqlmodel import Session

from pbem.orderlog import replay
from pbem.orders import OrdersError, parse_orders
from pbem.service.context import Context
from pbem.store import Game, Player, session_scope


def forecast_of(session: Session, game: Game, player: Player, text: str) -> list[str]:
    """The odds of every attack of ``text`` (valid orders of ``player``), the
    lines the CHECK mail carries (pbem.orders.forecast.forecast_lines): none
    when it is not the player's turn or there is no attack."""
    from pbem.orders.forecast import forecast_lines
    from pbem.service.play.games import load

    state = load(session, game).state
    try:
        parsed = parse_orders(text, state.board)
    except OrdersError:
        return []  # refused already: the caller said why
    return forecast_lines(state, parsed.orders, player.seat)


def turn_summary(session: Session, ctx: Context, game: Game, steps: list[replay.Step]) -> list[str]:
    """What the players' turns among ``steps`` did, as their reports' GM view
    says it: the placements, then the summary (conquests, continents,
    eliminations). Setup steps and commands say nothing here."""
    from pbem.report.turnview import turn_view
    from pbem.service.play.history import stored_report
    from pbem.service.play.mailinfo import game_info

    info = game_info(session, ctx, game)
    lines: list[str] = []
    for step in steps:
        if step.seat is None or step.turn <= 0:
            continue
        report = stored_report(session, info, game, step.turn)
        if report is None:
            continue
        view = turn_view(report, None)
        placed = [
            str(item)
            for section in view.sections
            if section.title == "Reinforcements"
            for item in section.items
        ]
        lines += [f"turn {step.turn}:"] + [f"  {line}" for line in placed + view.headline]
        if view.winner is not None:
            lines.append(f"  {view.win_text}")
    return lines


def mails_waiting(engine: Engine, now: datetime) -> int:
    """The mails in the outbox waiting to go out (what a command queued shows
    as the difference before and after it)."""
    from pbem.service.tell import outbox

    with session_scope(engine, write=False) as session:
        return outbox.counts(session, now).pending
