"""The reports of turns already played, rebuilt from the store (HISTORY,
`pbem render`, the digest): the stored events and the snapshots before and after."""

from __future__ import annotations

import json

from sqlmodel import Session, col, select

from pbem.report import context as rc
from pbem.report import render
from pbem.report.mime import RenderedMail
from pbem.rules.state import ENDED, GameState
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.play.games import definition_of
from pbem.service.play.mailinfo import game_info
from pbem.store import Game, TurnResult


def results(session: Session, game: Game) -> list[TurnResult]:
    """Every stored step of the game, in the order played."""
    query = select(TurnResult).where(TurnResult.game_id == game.id).order_by(col(TurnResult.seq))
    return list(session.exec(query))


def turns_played(session: Session, game: Game) -> list[int]:
    """The turns of the players' steps (what HISTORY lists)."""
    return [r.turn for r in results(session, game) if r.seat is not None]


def stored_report(
    session: Session, info: rc.GameInfo, game: Game, turn: int | None
) -> rc.TurnReport | None:
    """The report of a played turn (the latest when ``turn`` is None), rebuilt
    from the stored events and the snapshots before and after it."""
    from pbem.rules.events import event_from_dict

    rows = results(session, game)
    played = [i for i, r in enumerate(rows) if r.seat is not None and r.turn > 0]
    if turn is not None:
        played = [i for i in played if rows[i].turn == turn]
    if not played:
        return None
    i = played[-1]
    row = rows[i]
    definition = definition_of(session, game)

    def state_of(result: TurnResult) -> GameState:
        data = json.loads(result.snapshot_json)
        return GameState.from_dict(data, definition.board, definition.options)

    after = state_of(row)
    before = state_of(rows[i - 1]) if i else after
    events = tuple(event_from_dict(e) for e in json.loads(row.events_json))
    next_seat = after.current if after.phase != ENDED else None
    assert row.seat is not None  # a report is of a player's step
    return rc.TurnReport(
        info, row.turn, row.seat, events, before, after, row.state_hash, None, next_seat
    )


def render_turn(
    session: Session,
    ctx: Context,
    game: Game,
    turn: int | None,
    seat: int | None,
) -> RenderedMail:
    """`pbem render`: a stored turn's report as ``seat`` (None: the GM) sees it."""
    report = stored_report(session, game_info(session, ctx, game), game, turn)
    if report is None:
        which = f"turn {turn}" if turn is not None else "any turn"
        raise ServiceError(f"game {game.name} has no report of {which} yet")
    return render.render_turn_report(report, seat)
