"""What the GM's hand-play commands say of the orders they take (`pbem
adjudicate`, `pbem check --game`): the odds of the attacks, as the CHECK mail
gives them, and once played, what the turn did, as its report says it."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine
from sqlmodel import Session

from pbem.orderlog import replay
from pbem.orders import OrdersError, parse_orders
from pbem.service.context import Context
from pbem.store import Game, Player, session_scope
from pbem.vocab import GamePhase, GameStatus

if TYPE_CHECKING:
    from pbem.report.turnview import TurnView


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
        attacks = _attack_lines(view)
        lines += [f"turn {step.turn}:"] + [
            f"  {line}" for line in placed + attacks + view.headline
        ]
        if view.winner is not None:
            lines.append(f"  {view.win_text}")
    return lines


def _attack_lines(view: TurnView) -> list[str]:
    """Each attack of the turn, as its report's result line says it, and the
    tally: "carol attacked 2 times: 0 taken, 2 failed; lost 6 armies"."""
    from pbem.report.turnview import AttackLine

    found = [
        item
        for section in view.sections
        if section.title == "Attacks"
        for item in section.items
        if isinstance(item, AttackLine)
    ]
    if not found:
        return []
    taken = sum(1 for a in found if a.conquered)
    lost = sum(int(m.group(1)) for a in found if (m := _LOST.search(a.result)))
    times = "once" if len(found) == 1 else f"{len(found)} times"
    tally = (
        f"{view.mover.name} attacked {times}: {taken} taken, {len(found) - taken} failed; "
        f"lost {lost} {'army' if lost == 1 else 'armies'}"
    )
    return [f"{a.head} {a.result}" for a in found] + [tally]


_LOST = re.compile(r"\(lost (\d+), killed")


def next_step(session: Session, game: Game) -> str:
    """Who the game waits for now, and until when: "next: alice to move (turn
    3), deadline 2026-05-01 12:00 UTC" (what `pbem adjudicate` and `pbem
    process` end with); "" once the game is over."""
    from pbem.report.moving import to_move
    from pbem.rules.state import ROUND, SETUP_PHASES
    from pbem.service.play.games import load, players_of
    from pbem.service.play.turns import must_act

    if game.phase == GamePhase.OVER or game.phase == GamePhase.OPEN:
        return ""
    state = load(session, game).state
    waiting = [p.name for p in must_act(session, game, state, players_of(session, game))]
    if state.phase in SETUP_PHASES:
        what = "setup orders from " + (", ".join(waiting) or "no one (all sent)")
    else:
        what = to_move(state) + ("" if state.phase == ROUND else f" (turn {state.turn})")
        if not waiting:
            what += ", played by the bot or at the deadline"
    if game.status == GameStatus.PAUSED:
        return f"next: {what}; the game is paused (no deadline)"
    deadline = f"{game.deadline:%Y-%m-%d %H:%M} UTC" if game.deadline else "none"
    return f"next: {what}; deadline {deadline}"


def mails_waiting(engine: Engine, now: datetime) -> int:
    """The mails in the outbox waiting to go out (what a command queued shows
    as the difference before and after it)."""
    from pbem.service.tell import outbox

    with session_scope(engine, write=False) as session:
        return outbox.counts(session, now).pending
